"""A Kubernetes API emulator for the operator's end-to-end tests.

kmock (PyPI) serves discovery and records requests; this thin layer adds what
kube-runtime controllers and kubectl need and kmock lacks: uid,
resourceVersion, generation and creationTimestamp on objects; lists with a
kind and a resourceVersion; label selectors; JSON patch with the apiserver's
`test` semantics; merge, strategic and server-side-apply patches (approximated
as merge patches, creating on apply); PUT with optimistic concurrency; the
status subresource (only `.status` changes; a main-resource write keeps the
old status); finalizers and deletionTimestamp; watches per resource,
namespace and selector with bookmarks and timeouts; and Lease conflicts for
leader election.

    python tests/kube/emulator.py [--port N]

prints `listening http://127.0.0.1:PORT` once it serves.
"""

import argparse
import asyncio
import copy
import datetime
import itertools
import sys
import uuid

import aiohttp.web
import jsonpatch
import kmock
from kmock._internal import apps, enums

RV = itertools.count(1)


def now():
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro():
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s):
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.datetime.strptime(s, fmt).replace(tzinfo=datetime.UTC)
        except (TypeError, ValueError):
            pass
    return None


def merge(a, b):
    """RFC 7386 merge patch."""
    if not isinstance(b, dict):
        return copy.deepcopy(b)
    a = dict(a) if isinstance(a, dict) else {}
    for k, v in b.items():
        if v is None:
            a.pop(k, None)
        else:
            a[k] = merge(a.get(k), v)
    return a


def selector_matches(obj, sel):
    if not sel:
        return True
    labels = obj.get("metadata", {}).get("labels") or {}
    for term in sel.split(","):
        term = term.strip()
        if "!=" in term:
            k, v = term.split("!=", 1)
            ok = labels.get(k) != v
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            ok = labels.get(k) == v
        elif term.startswith("!"):
            ok = term[1:] not in labels
        else:
            ok = term in labels
        if not ok:
            return False
    return True


def status(code, reason, message):
    """A Kubernetes Status error (kmock renders it; a returned Response
    would stick its status to the shared fallback reaction)."""
    return kmock.KubernetesError(status=code, reason=reason, message=message)


class Emulator(kmock.KubernetesEmulator):
    store = None
    watchers = None
    # Every event, so a watch that starts at a resourceVersion misses nothing
    # that happened after the list it follows.
    history = None

    async def _handle(self, request):
        if request.resource is None:  # discovery and the like: kmock's own
            return await super()._handle(request)
        if self.store is None:
            self.store, self.watchers, self.history = {}, [], []
        if request.method == enums.method.PUT:
            return self._render(await self._replace(request))
        # Skip the emulator's naive state changes, keep kmock's request log and fallbacks.
        return await apps.RawHandler._handle(self, request)

    @staticmethod
    def _render(payload):
        return aiohttp.web.json_response(payload)

    @staticmethod
    def _key(r, name=None, ns=None):
        return (str(r.resource), ns or r.namespace, name or r.name)

    def _emit(self, kind, obj, res):
        if kind == "DELETED":  # a deletion is a change with its own version
            obj = copy.deepcopy(obj)
            obj["metadata"]["resourceVersion"] = str(next(RV))
        self.history.append((int(obj["metadata"]["resourceVersion"]), kind, copy.deepcopy(obj), res))
        for q, wres, ns, sel in list(self.watchers):
            if wres == res and (ns is None or obj["metadata"].get("namespace") == ns) \
                    and selector_matches(obj, sel):
                q.put_nowait({"type": kind, "object": copy.deepcopy(obj)})

    @staticmethod
    def _stamp(obj, old=None):
        m = obj.setdefault("metadata", {})
        m["resourceVersion"] = str(next(RV))
        if old is None:
            m.update(uid=str(uuid.uuid4()), creationTimestamp=now(), generation=1)
        else:
            for f in ("uid", "creationTimestamp"):
                m[f] = old["metadata"][f]
            if old["metadata"].get("deletionTimestamp"):
                m["deletionTimestamp"] = old["metadata"]["deletionTimestamp"]
            m["generation"] = old["metadata"].get("generation", 1) + (obj.get("spec") != old.get("spec"))
        return obj

    async def _serve_list(self, r):
        sel = r.params.get("labelSelector")
        items = [o for (res, ns, _), o in self.store.items()
                 if res == str(r.resource) and r.namespace in (None, ns) and selector_matches(o, sel)]
        kind = (items[0]["kind"] + "List") if items else "List"
        return {"apiVersion": "v1", "kind": kind,
                "metadata": {"resourceVersion": str(next(RV))}, "items": items}

    async def _serve_watch(self, r):
        yield b""
        q = asyncio.Queue()
        res, ns, sel = str(r.resource), r.namespace, r.params.get("labelSelector")
        w = (q, res, ns, sel)
        self.watchers.append(w)
        since = int(r.params.get("resourceVersion") or 0)
        if since:
            for rv, kind, obj, hres in self.history:
                if rv > since and hres == res and (ns is None or obj["metadata"].get("namespace") == ns) \
                        and selector_matches(obj, sel):
                    q.put_nowait({"type": kind, "object": copy.deepcopy(obj)})
        try:
            timeout = float(r.params.get("timeoutSeconds", 290))
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout
            while (left := end - loop.time()) > 0:
                try:
                    yield await asyncio.wait_for(q.get(), min(left, 2))
                except asyncio.TimeoutError:
                    if r.params.get("allowWatchBookmarks") == "true":
                        yield {"type": "BOOKMARK", "object": {
                            "kind": "Bookmark", "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(next(RV))}}}
        finally:
            self.watchers.remove(w)

    async def _serve_fetch(self, r):
        o = self.store.get(self._key(r))
        if o is None:
            raise status(404, "NotFound", f"{r.resource} \"{r.name}\" not found")
        return o

    async def _serve_create(self, r):
        d = copy.deepcopy(r.data)
        ns = r.namespace or d.get("metadata", {}).get("namespace")
        d.setdefault("metadata", {})["namespace"] = ns
        if "kind" not in d and getattr(r.resource, "kind", None):
            d["kind"] = r.resource.kind
        k = self._key(r, d["metadata"].get("name"), ns)
        if k in self.store:
            raise status(409, "AlreadyExists", f"{k[2]} already exists")
        self.store[k] = self._stamp(d)
        self._emit("ADDED", d, k[0])
        return d

    def _lease_conflict(self, old, patch):
        """A server-side apply that would take a Lease someone else holds."""
        if old is None or not str(self._res_of(old)).endswith("leases"):
            return False
        cur = old.get("spec", {})
        new = (patch or {}).get("spec", {})
        holder, wanted = cur.get("holderIdentity"), new.get("holderIdentity")
        if not holder or not wanted or holder == wanted:
            return False
        renewed = parse_time(cur.get("renewTime") or cur.get("acquireTime") or "")
        duration = cur.get("leaseDurationSeconds") or 0
        if renewed is None:
            return False
        return (datetime.datetime.now(datetime.UTC) - renewed).total_seconds() < duration

    @staticmethod
    def _res_of(obj):
        return obj.get("apiVersion", "") + "/" + obj.get("kind", "").lower() + "s"

    async def _serve_update(self, r):
        k = self._key(r)
        old = self.store.get(k)
        ct = r.headers.get("Content-Type", "")
        if old is None and "apply-patch" in ct and r.subresource is None:
            return await self._serve_create(r)
        if old is None:
            raise status(404, "NotFound", f"{r.resource} \"{r.name}\" not found")
        if "apply-patch" in ct and self._lease_conflict(old, r.data):
            raise status(409, "Conflict", "the lease is held by another identity")
        if "json-patch" in ct:
            ops = copy.deepcopy(r.data)
            for op in ops:
                # The apiserver treats `test` of a missing path against null as passing.
                if op["op"] == "test" and op.get("value") is None:
                    try:
                        jsonpatch.JsonPointer(op["path"]).resolve(old)
                    except jsonpatch.JsonPointerException:
                        op["op"] = "_skip"
            try:
                new = jsonpatch.apply_patch(old, [o for o in ops if o["op"] != "_skip"])
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                raise status(422, "Invalid", f"json patch failed: {e}")
        else:
            new = merge(old, r.data)
        if r.subresource == "status":
            new = {**old, "status": new.get("status")}
        elif "status" in old:
            new["status"] = old["status"]
        return self._commit(k, old, new)

    def _commit(self, k, old, new):
        m = new["metadata"]
        if (m.get("deletionTimestamp") or old["metadata"].get("deletionTimestamp")) and not m.get("finalizers"):
            del self.store[k]
            self._emit("DELETED", new, k[0])
            return new
        self._stamp(new, old)
        self.store[k] = new
        self._emit("MODIFIED", new, k[0])
        return new

    async def _replace(self, r):
        k = self._key(r)
        old = self.store.get(k)
        if old is None:
            raise status(404, "NotFound", f"{k[2]} not found")
        rv = r.data.get("metadata", {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise status(409, "Conflict", "the object has been modified")
        new = copy.deepcopy(r.data)
        if r.subresource == "status":
            new = {**old, "status": new.get("status")}
        elif "status" in old:
            new["status"] = old["status"]
        return self._commit(k, old, new)

    async def _serve_delete(self, r):
        k = self._key(r)
        o = self.store.get(k)
        if o is None:
            raise status(404, "NotFound", f"{r.resource} \"{r.name}\" not found")
        if o["metadata"].get("finalizers"):
            if not o["metadata"].get("deletionTimestamp"):
                new = copy.deepcopy(o)
                new["metadata"]["deletionTimestamp"] = now()
                return self._commit(k, o, new)
            return o
        del self.store[k]
        self._emit("DELETED", o, k[0])
        return o


RESOURCES = {
    "webdata.io/v1/crawljobs": dict(kind="CrawlJob", singular="crawljob", namespaced=True,
                                    shortnames={"cj"}, categories={"webdata"}, subresources={"status"}),
    "webdata.io/v1/crawlschedules": dict(kind="CrawlSchedule", singular="crawlschedule", namespaced=True,
                                         shortnames={"cs"}, categories={"webdata"}, subresources={"status"}),
    "webdata.io/v1/workerpools": dict(kind="WorkerPool", singular="workerpool", namespaced=True,
                                      shortnames={"wp"}, categories={"webdata"}, subresources={"status"}),
    "apps/v1/deployments": dict(kind="Deployment", singular="deployment", namespaced=True,
                                shortnames={"deploy"}, subresources={"status", "scale"}),
    "v1/services": dict(kind="Service", singular="service", namespaced=True, shortnames={"svc"}),
    "v1/pods": dict(kind="Pod", singular="pod", namespaced=True, shortnames={"po"}),
    "v1/secrets": dict(kind="Secret", singular="secret", namespaced=True),
    "v1/namespaces": dict(kind="Namespace", singular="namespace", namespaced=False, shortnames={"ns"}),
    "events.k8s.io/v1/events": dict(kind="Event", singular="event", namespaced=True, shortnames={"ev"}),
    "coordination.k8s.io/v1/leases": dict(kind="Lease", singular="lease", namespaced=True),
}
VERBS = {"get", "list", "watch", "create", "patch", "update", "delete"}


async def main(port):
    async with Emulator() as k, kmock.Server(k, host="127.0.0.1", port=port) as srv:
        for path, info in RESOURCES.items():
            k.resources[path] = kmock.ResourceInfo(verbs=VERBS, **info)
        print("listening", srv.url, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()
    try:
        asyncio.run(main(args.port))
    except KeyboardInterrupt:
        sys.exit(0)
