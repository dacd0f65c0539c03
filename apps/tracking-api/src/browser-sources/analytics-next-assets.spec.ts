import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AnalyticsNextAssets } from './analytics-next-assets';

const directory = join(dirname(require.resolve('@segment/analytics-next/package.json')), 'dist', 'umd');

describe('AnalyticsNextAssets', () => {
  it('serves the loader and a chunk the package ships', async () => {
    const assets = new AnalyticsNextAssets();
    const chunk = readdirSync(directory).find((name) => /\.bundle\.[0-9a-f]{20}\.js$/.test(name));
    expect(chunk).toBeDefined();
    const served = await assets.bundle(chunk!);
    expect(served?.body.length).toBeGreaterThan(0);
    expect(served?.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect((await assets.loader('analytics.min.js'))?.body.length).toBeGreaterThan(0);
    expect(await assets.loader('standalone.js')).toBeUndefined();
  });

  it('keeps nothing for names the package lacks, however many are asked for', async () => {
    const assets = new AnalyticsNextAssets();
    await assets.loader('analytics.min.js');
    const kept = assets['files'].size;
    for (let name = 0; name < 10_000; name++) {
      const missing = `made-up-${name}.bundle.${name.toString(16).padStart(20, '0')}.js`;
      await expect(assets.bundle(missing)).resolves.toBeUndefined();
    }
    expect(assets['files'].size).toBe(kept);
  });
});
