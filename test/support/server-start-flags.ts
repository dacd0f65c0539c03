import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node flags Tributary is started with: those of `npm run start:prod`, which `npm start`, the image
 * and docker-compose.yml share (`test/production-build.e2e-spec.ts`, `test/topology/`). The bench
 * starts its server with them, so it measures the server as it is run.
 */
export function serverStartFlags(): string[] {
  const packageJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const command = packageJson.scripts['start:prod'] ?? '';
  const match = /^node((?:\s+--\S+)*)\s+dist\/apps\/tributary\/src\/main\.js$/.exec(command);
  if (!match) throw new Error(`package.json start:prod is not "node [--flags] dist/.../main.js": ${command}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}
