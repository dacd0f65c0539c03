import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The version of the `tributary` package this CLI belongs to: its `package.json` is found by walking
 * up from this file, which sits at a different depth in the sources and in `dist/`.
 */
export function packageVersion(from: string = __dirname): string {
  for (let directory = from; ; directory = dirname(directory)) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
      if (manifest.name === 'tributary' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here, or not ours: look one folder up.
    }
    if (dirname(directory) === directory) return 'unknown';
  }
}
