import { spawn } from 'node:child_process';
import { join } from 'node:path';

const FIXTURE = join(__dirname, 'graceful-shutdown.fixture.ts');
const REGISTER_HOOK = join(__dirname, '..', '..', '..', '..', 'test', 'support', 'swc-register.js');

/** Starts the fixture, sends `signal` once it is ready, and reports how it ended. */
async function stopFixture(
  environment: Record<string, string>,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string; elapsedMs: number }> {
  const child = spawn(process.execPath, ['--require', REGISTER_HOOK, FIXTURE], {
    env: { PATH: process.env['PATH'], ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let signalledAt = 0;
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (signalledAt === 0 && output.includes('ready')) {
      signalledAt = Date.now();
      child.kill(signal);
      // A second signal while closing is ignored, not a second close.
      setTimeout(() => child.exitCode === null && child.kill(signal), 20);
    }
  });
  return new Promise((resolve) =>
    child.once('exit', (code, exitSignal) =>
      resolve({ code, signal: exitSignal, output, elapsedMs: Date.now() - signalledAt }),
    ),
  );
}

describe('stopGracefullyOnSignals', () => {
  it('closes the application and exits 0 once it is closed', async () => {
    const result = await stopFixture({ CLOSE_MS: '200' });
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(200);
    expect(result.output).toMatch(/fixture: SIGTERM received, closing/);
    expect(result.output).toMatch(/fixture: closed in \d+ ms/);
    expect(result.output.match(/received/g)).toHaveLength(1);
  }, 20_000);

  it('does the same on SIGINT (Ctrl-C)', async () => {
    const result = await stopFixture({ CLOSE_MS: '0' }, 'SIGINT');
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
  }, 20_000);

  it('exits 1 with a line saying so when closing outlasts the limit', async () => {
    const result = await stopFixture({ CLOSE_MS: 'never', LIMIT_MS: '500' });
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(500);
    expect(result.elapsedMs).toBeLessThan(5000);
    expect(result.output).toMatch(/fixture: shutdown did not finish within 0.5 s; exiting anyway/);
  }, 20_000);

  it('exits 1 with the reason when closing fails', async () => {
    const result = await stopFixture({ CLOSE_MS: 'fail' });
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.output).toMatch(/fixture: shutdown failed: Error: the store would not close/);
  }, 20_000);
});
