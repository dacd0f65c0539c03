import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * `npm start` builds with tsconfig.build.json; a test file or a test helper pulled into that build
 * (jest globals) breaks it while every test still passes. This keeps the README's run command honest.
 */
it('the production build type-checks', async () => {
  const root = join(__dirname, '..');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noEmit'], {
    cwd: root,
    timeout: 170_000,
  }).catch((error: { stdout?: string; code?: number }) => ({ stdout: error.stdout ?? '', failed: true }));
  expect('failed' in result ? result.stdout : '').toBe('');
}, 180_000);
