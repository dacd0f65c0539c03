import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverStartFlags } from '../../../bench/tributary-server.process';

const repositoryRoot = join(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(join(repositoryRoot, file), 'utf8');

/**
 * The server's node flags (a larger young generation, BENCHMARKS.md) live where it is started: `npm
 * start`, `npm run start:prod`, the image, and each app of docker-compose.yml. The
 * bench starts its server with those of `start:prod`, so what it measures is what users run.
 */
describe('the flags Tributary is started with', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const flags = serverStartFlags();

  it('include the larger young generation', () => {
    expect(flags).toContain('--max-semi-space-size=32');
  });

  it('are the same for npm start, npm run start:prod and the Dockerfile', () => {
    const mainScript = 'dist/apps/tributary/src/main.js';
    expect(scripts['start']).toMatch(new RegExp(`&& node ${flags.join(' ')} ${mainScript}$`));
    expect(scripts['start:prod']).toBe(`node ${flags.join(' ')} ${mainScript}`);
    const dockerCommand = /^CMD (\[.*\])$/m.exec(read('Dockerfile'));
    expect(JSON.parse(dockerCommand![1]!)).toEqual(['node', ...flags, mainScript]);
  });

  it('start every app of docker-compose.yml the same way', () => {
    const compose = read('docker-compose.yml');
    for (const app of ['config-api', 'tracking-api', 'router']) {
      const flagsText = flags.map((flag) => `'${flag}', `).join('');
      expect(compose).toContain(`command: ['node', ${flagsText}'dist/apps/${app}/src/main.js']`);
    }
  });
});
