//! The browser pool: at most `max_sessions` sessions, reused between
//! renders after their browser context is wiped, killed and replaced when
//! they break or overrun a deadline.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::driver::{self, DriverSupervisor};
use super::proxy::InternalPorts;
use super::session::{Origin, PidRegistry, Session};
use super::{BrowserConfig, RenderError, RenderRequest, Rendered};
use crate::guard::NetworkGuard;

/// A session is retired after this many renders (bounds browser memory growth).
const MAX_RENDERS_PER_SESSION: u32 = 200;
/// Idle sessions older than this are closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How long wiping a session between renders may take.
const RESET_TIMEOUT: Duration = Duration::from_secs(15);
/// A broken reused session is replaced and the render retried only when
/// at least this much time is left.
const RETRY_MIN_LEFT: Duration = Duration::from_secs(3);
/// How long shutdown waits for renders and wipes in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Process ids of the pool's local processes (for supervision and tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessIds {
    /// The chromedriver we spawned, if running.
    pub driver: Option<u32>,
    /// The Chromium browsers we launched (one per live session).
    pub browsers: Vec<u32>,
}

enum Backend {
    Local {
        driver: DriverSupervisor,
        chromium: PathBuf,
    },
    Remote {
        url: String,
        proxy_bind: std::net::IpAddr,
        proxy_advertise: Option<String>,
    },
}

struct Inner {
    guard: NetworkGuard,
    backend: Backend,
    permits: Arc<Semaphore>,
    max_sessions: usize,
    acquire_timeout: Duration,
    idle: Mutex<Vec<Session>>,
    started: AtomicU64,
    next_id: AtomicU64,
    internal: InternalPorts,
    pids: PidRegistry,
    closed: AtomicBool,
    avg_render_ms: AtomicU64,
}

/// A bounded pool of browser sessions; cheap to clone.
#[derive(Clone)]
pub struct BrowserPool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for BrowserPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserPool")
            .field("available", &self.available())
            .field("sessions_started", &self.sessions_started())
            .finish_non_exhaustive()
    }
}

impl BrowserPool {
    /// Prepares the pool; no browser starts until the first render.
    /// `NotAvailable` when there is no WebDriver URL and no local
    /// chromedriver and Chromium.
    pub async fn start(cfg: BrowserConfig) -> Result<Self, RenderError> {
        let backend = match cfg.webdriver_url.as_deref().map(str::trim) {
            Some(url) if !url.is_empty() => {
                url::Url::parse(url).map_err(|e| {
                    RenderError::NotAvailable(format!("WebDriver URL {url:?} is not a URL: {e}"))
                })?;
                Backend::Remote {
                    url: url.to_owned(),
                    proxy_bind: cfg.proxy_bind,
                    proxy_advertise: cfg.proxy_advertise.clone(),
                }
            }
            _ => {
                let chromedriver =
                    driver::locate(cfg.chromedriver_path.as_deref(), &["chromedriver"])
                        .ok_or_else(|| {
                            RenderError::NotAvailable(
                                "no WebDriver URL is configured and chromedriver is not installed \
                             (install chromium and chromium-driver, or set WEBDATA_WEBDRIVER_URL)"
                                    .into(),
                            )
                        })?;
                let chromium =
                    driver::locate_chromium(cfg.chromium_path.as_deref()).ok_or_else(|| {
                        RenderError::NotAvailable(
                            "chromedriver is installed but Chromium is not \
                         (install chromium, or set WEBDATA_CHROMIUM_PATH)"
                                .into(),
                        )
                    })?;
                Backend::Local {
                    driver: DriverSupervisor::new(chromedriver),
                    chromium,
                }
            }
        };
        let inner = Arc::new(Inner {
            guard: cfg.guard,
            backend,
            permits: Arc::new(Semaphore::new(cfg.max_sessions.max(1))),
            max_sessions: cfg.max_sessions.max(1),
            acquire_timeout: cfg.acquire_timeout,
            idle: Mutex::new(Vec::new()),
            started: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
            internal: InternalPorts::default(),
            pids: PidRegistry::default(),
            closed: AtomicBool::new(false),
            avg_render_ms: AtomicU64::new(0),
        });
        if matches!(inner.backend, Backend::Local { .. }) {
            tokio::task::spawn_blocking(driver::sweep_stale_profiles);
        }
        tokio::spawn(reap_idle(Arc::downgrade(&inner)));
        Ok(Self { inner })
    }

    /// True until [`shutdown`](Self::shutdown).
    pub fn available(&self) -> bool {
        !self.inner.closed.load(Ordering::Relaxed)
    }

    /// Browser sessions launched so far (a render that never needed a
    /// browser leaves this at zero).
    pub fn sessions_started(&self) -> u64 {
        self.inner.started.load(Ordering::Relaxed)
    }

    /// Process ids of the local chromedriver and browsers.
    pub fn process_ids(&self) -> ProcessIds {
        let driver = match &self.inner.backend {
            Backend::Local { driver, .. } => driver.pid(),
            Backend::Remote { .. } => None,
        };
        ProcessIds {
            driver,
            browsers: self.inner.pids.pids(),
        }
    }

    /// Starts one session ahead of the first render (optional).
    pub async fn warm_up(&self) -> Result<(), RenderError> {
        let permit = self
            .acquire(tokio::time::Instant::now() + self.inner.acquire_timeout)
            .await?;
        let (session, _) = self.checkout().await?;
        self.checkin_clean(session);
        drop(permit);
        Ok(())
    }

    /// Renders one page; see [`RenderError`] for the ways it can fail.
    pub async fn render(&self, req: &RenderRequest) -> Result<Rendered, RenderError> {
        let started = Instant::now();
        if !self.available() {
            return Err(RenderError::NotAvailable(
                "the browser pool was shut down".into(),
            ));
        }
        self.inner
            .guard
            .check_parsed(&req.url)
            .map_err(|e| RenderError::Blocked(e.to_string()))?;
        if req.deadline <= tokio::time::Instant::now() {
            return Err(RenderError::Timeout);
        }
        let permit = self.acquire(req.deadline).await?;
        let result = tokio::time::timeout_at(req.deadline, self.render_with(req, permit))
            .await
            .unwrap_or(Err(RenderError::Timeout));
        result.map(|mut rendered| {
            rendered.elapsed = started.elapsed();
            self.note_duration(rendered.elapsed);
            rendered
        })
    }

    /// Stops taking renders, lets those in flight finish (up to 10 s),
    /// closes every session and stops chromedriver.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::Relaxed);
        let all = u32::try_from(self.inner.max_sessions).unwrap_or(u32::MAX);
        let drained =
            tokio::time::timeout(SHUTDOWN_GRACE, self.inner.permits.acquire_many(all)).await;
        drop(drained);
        self.inner.permits.close();
        let idle: Vec<Session> = self
            .inner
            .idle
            .lock()
            .map(|mut v| v.drain(..).collect())
            .unwrap_or_default();
        futures::future::join_all(idle.into_iter().map(|s| self.inner.retire(s))).await;
        if let Backend::Local { driver, .. } = &self.inner.backend {
            driver.stop().await;
        }
    }

    async fn acquire(
        &self,
        deadline: tokio::time::Instant,
    ) -> Result<OwnedSemaphorePermit, RenderError> {
        let wait_until = (tokio::time::Instant::now() + self.inner.acquire_timeout).min(deadline);
        let acquiring = self.inner.permits.clone().acquire_owned();
        match tokio::time::timeout_at(wait_until, acquiring).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) => Err(RenderError::NotAvailable(
                "the browser pool was shut down".into(),
            )),
            Err(_) => Err(RenderError::Capacity {
                retry_after_ms: self.retry_hint_ms(),
            }),
        }
    }

    async fn render_with(
        &self,
        req: &RenderRequest,
        permit: OwnedSemaphorePermit,
    ) -> Result<Rendered, RenderError> {
        let mut retried = false;
        loop {
            let (mut session, reused) = self.checkout().await?;
            match session.render(req).await {
                Ok(rendered) => {
                    self.checkin(session, permit);
                    return Ok(rendered);
                }
                Err(failure) if failure.session_ok => {
                    self.checkin(session, permit);
                    return Err(failure.error);
                }
                Err(failure) => {
                    tracing::warn!(error = %failure.error, session = session.id, "browser session broke; replacing it");
                    drop(session);
                    let left = req
                        .deadline
                        .saturating_duration_since(tokio::time::Instant::now());
                    if reused && !retried && left >= RETRY_MIN_LEFT {
                        retried = true;
                        continue;
                    }
                    return Err(failure.error);
                }
            }
        }
    }

    /// An idle healthy session, or a new one.
    async fn checkout(&self) -> Result<(Session, bool), RenderError> {
        let generation = match &self.inner.backend {
            Backend::Local { driver, .. } => Some(driver.ensure().await?.1),
            Backend::Remote { .. } => None,
        };
        loop {
            let candidate = self.inner.idle.lock().ok().and_then(|mut idle| idle.pop());
            let Some(mut session) = candidate else { break };
            if session.is_alive() && session.driver_generation == generation {
                return Ok((session, true));
            }
            tracing::info!(session = session.id, "dropping a dead idle browser session");
        }
        Ok((self.new_session().await?, false))
    }

    async fn new_session(&self) -> Result<Session, RenderError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        self.inner.started.fetch_add(1, Ordering::Relaxed);
        let guard = self.inner.guard.clone();
        let internal = self.inner.internal.clone();
        let mut session = match &self.inner.backend {
            Backend::Local { driver, chromium } => {
                let (url, generation, port) = driver.ensure().await?;
                internal.add(port);
                let origin = Origin::Local {
                    driver_url: &url,
                    driver_generation: generation,
                    chromium,
                };
                Session::start(id, origin, guard, internal).await?
            }
            Backend::Remote {
                url,
                proxy_bind,
                proxy_advertise,
            } => {
                let origin = Origin::Remote {
                    webdriver_url: url,
                    proxy_bind: *proxy_bind,
                    proxy_advertise: proxy_advertise.as_deref(),
                };
                Session::start(id, origin, guard, internal).await?
            }
        };
        if let Some(pid) = session.pid() {
            self.inner.pids.insert(id, pid);
        }
        session.set_registry(self.inner.pids.clone());
        Ok(session)
    }

    /// Returns a used session: wiped in the background, then idle; the
    /// permit is held until then so a busy pool never exceeds its size.
    fn checkin(&self, mut session: Session, permit: OwnedSemaphorePermit) {
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let keep = session.reusable()
                && session.renders < MAX_RENDERS_PER_SESSION
                && !inner.closed.load(Ordering::Relaxed);
            if !keep {
                inner.retire(session).await;
            } else {
                match tokio::time::timeout(RESET_TIMEOUT, session.reset()).await {
                    Ok(Ok(())) => inner.park(session),
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, session = session.id, "could not wipe a browser session; replacing it");
                    }
                    Err(_) => tracing::warn!(
                        session = session.id,
                        "wiping a browser session timed out; replacing it"
                    ),
                }
            }
            drop(permit);
        });
    }

    /// Parks a session that has not rendered yet.
    fn checkin_clean(&self, session: Session) {
        self.inner.park(session);
    }

    fn note_duration(&self, elapsed: Duration) {
        let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let old = self.inner.avg_render_ms.load(Ordering::Relaxed);
        let new = if old == 0 { ms } else { (old * 7 + ms) / 8 };
        self.inner.avg_render_ms.store(new, Ordering::Relaxed);
    }

    fn retry_hint_ms(&self) -> u64 {
        match self.inner.avg_render_ms.load(Ordering::Relaxed) {
            0 => 1000,
            avg => avg.clamp(250, 10_000),
        }
    }
}

impl Inner {
    fn park(&self, mut session: Session) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        session.idle_since = Instant::now();
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(session);
        }
    }

    async fn retire(&self, session: Session) {
        session.close().await;
    }
}

/// Closes sessions that sat idle too long, while the pool lives.
async fn reap_idle(pool: Weak<Inner>) {
    let mut tick = tokio::time::interval(Duration::from_secs(30));
    loop {
        tick.tick().await;
        let Some(inner) = pool.upgrade() else { return };
        if inner.closed.load(Ordering::Relaxed) {
            return;
        }
        let stale: Vec<Session> = match inner.idle.lock() {
            Ok(mut idle) => {
                let (old, fresh): (Vec<Session>, Vec<Session>) = idle
                    .drain(..)
                    .partition(|s| s.idle_since.elapsed() > IDLE_TIMEOUT);
                *idle = fresh;
                old
            }
            Err(_) => Vec::new(),
        };
        for session in stale {
            inner.retire(session).await;
        }
    }
}
