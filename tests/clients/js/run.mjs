// Drives the released @mendable/firecrawl-js (v2 client, and its v1 client)
// against webdata. Env: WD_API_URL (Firecrawl-compatible base URL), WD_KEY,
// WD_SITE (a test site on loopback). Prints one JSON object of results.
import Firecrawl, { FirecrawlAppV1 } from "@mendable/firecrawl-js";

const apiUrl = process.env.WD_API_URL;
const apiKey = process.env.WD_KEY;
const site = process.env.WD_SITE;
const fc = new Firecrawl({ apiKey, apiUrl });
const out = {};

const doc = await fc.scrape(`${site}/a`, { formats: ["markdown", "links"] });
out.scrape = { markdown: doc.markdown, sourceURL: doc.metadata?.sourceURL, statusCode: doc.metadata?.statusCode, links: doc.links };

const job = await fc.crawl(`${site}/docs/`, { limit: 20, sitemap: "skip", pollInterval: 1, timeout: 120 });
out.crawl = { status: job.status, urls: job.data.map((d) => d.metadata?.sourceURL).sort(), creditsUsed: job.creditsUsed };

const started = await fc.startCrawl(`${site}/docs/slow`, { limit: 5, sitemap: "skip" });
out.cancel = { id: started.id, cancelled: await fc.cancelCrawl(started.id), after: (await fc.getCrawlStatus(started.id)).status };
out.errors = await fc.getCrawlErrors(started.id);

const map = await fc.map(`${site}/`, { limit: 50 });
out.map = map.links.map((l) => l.url);

const batch = await fc.batchScrape([`${site}/a`, `${site}/b`], { options: { formats: ["markdown"] }, pollInterval: 1, timeout: 120 });
out.batch = { status: batch.status, urls: batch.data.map((d) => d.metadata?.sourceURL).sort(), creditsUsed: batch.creditsUsed };

out.credits = await fc.getCreditUsage();

try {
  await fc.scrape(`${site}/a`, { formats: ["markdown", "summary"] });
  out.invalid = { thrown: false };
} catch (e) {
  out.invalid = { thrown: true, status: e.status, message: e.message, code: e.code };
}

const v1 = new FirecrawlAppV1({ apiKey, apiUrl });
const v1doc = await v1.scrapeUrl(`${site}/b`, { formats: ["markdown"] });
out.v1scrape = { success: v1doc.success, markdown: v1doc.markdown };
const v1batch = await v1.batchScrapeUrls([`${site}/a`], { formats: ["markdown"] }, 1);
out.v1batch = { success: v1batch.success, status: v1batch.status, count: v1batch.data?.length };

console.log(JSON.stringify(out));
