// The package benchmark's measurements, shared by Node (run.mjs imports this) and Chromium (the
// bench page imports it): extract-skill throughput through the package's public API, best of
// `passes`, in MB/s (10^6 bytes per second of UTF-8 text, as `quarry bench` counts).

/** The reference time `quarry bench` uses, so relative dates resolve alike. */
export const NOW = '2024-01-10T12:00:00Z';

/**
 * Throughput of `quarry.extract` on `text`: url+email (two calls, as `quarry bench`'s email+url
 * row) and date. Resolves to `{"email+url": MB/s, date: MB/s, counts}`.
 */
export async function measureThroughput(quarry, text, passes) {
  await quarry.init();
  const bytes = new TextEncoder().encode(text).length;
  const counts = {};
  const run = (targets) => {
    let best = Infinity;
    for (let pass = 0; pass < passes; pass += 1) {
      const started = performance.now();
      for (const target of targets) {
        const result = quarry.extract({ text, target, now: NOW });
        counts[target] = [result[target]].flat().length;
      }
      best = Math.min(best, (performance.now() - started) / 1000);
    }
    return bytes / 1e6 / best;
  };
  return { 'email+url': run(['email', 'url']), date: run(['date']), counts };
}
