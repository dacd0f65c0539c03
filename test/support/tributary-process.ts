// Tributary as a child process, for tests that must kill it as an operator or a crash would (SIGKILL)
// and start it again on the same data: the in-process `startTributary` cannot be killed that way.
import { generateAccessTokenSecret } from '@tributary/auth';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const REGISTER_HOOK = join(__dirname, 'swc-register.js');
/** The apps with a `main.ts`: the all-in-one and the three standalone processes of `docker-compose.yml`. */
export type TributaryApp = 'tributary' | 'config-api' | 'tracking-api' | 'router';
/** What each `main.ts` prints once the server accepts connections: `tributary[ <app>] listening on <url>`. */
const LISTENING = /tributary(?: [a-z-]+)? listening on (http:\/\/[^\s]+)/;
/** Printed just before it: where the separate `/metrics` listener is. */
const METRICS = /tributary(?: [a-z-]+)? metrics on (http:\/\/[^\s]+)/;

export interface SpawnOptions {
  /** Reuse a data directory: a restart of an earlier process. Default: a new temporary directory. */
  dataDir?: string;
  /** Default 0: a free port, read back from the "listening" line. Pass the old port to restart in place. */
  port?: number;
  /** The instance-admin token; pass the same one on restart. Default: a new one. */
  adminToken?: string;
  /** More environment variables (`RETRY_WINDOW`, `ROUTER_MAX_IN_FLIGHT`, ...). */
  environment?: Record<string, string>;
  /** How long to wait for the "listening" line. Default 60 s: a loaded machine compiles the app slowly. */
  startTimeoutMs?: number;
  /**
   * Run the built entry point (`dist/apps/<app>/src/main.js`, from `nest build`) as a deployment
   * does, instead of compiling `main.ts` at start: restarts take a second, not the compile's ten.
   */
  built?: boolean;
}

export interface TributaryProcess {
  baseUrl: string;
  port: number;
  /** `http://127.0.0.1:<port>/metrics`: the process's metrics listener (a free port unless set). */
  metricsUrl: string;
  adminToken: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far, for failure messages. */
  output(): string;
  /** Sends the signal and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `node --require test/support/swc-register.js apps/tributary/src/main.ts` on 127.0.0.1 and
 * resolves once it prints its "listening" line. The child gets only the environment it needs, so a
 * `NATS_URL` or `EVENTSTORE_URL` of the developer's shell does not leak into it.
 */
export function spawnTributary(options: SpawnOptions = {}): Promise<TributaryProcess> {
  return spawnTributaryApp('tributary', options);
}

/**
 * Starts one app's `main.ts` the same way. The standalone apps of one deployment share config through
 * the event store: give them the same `dataDir` (the SQLite event store sees other processes' appends
 * by polling its file) or the same `EVENTSTORE_URL`, the same `NATS_URL` in `environment`, and the
 * same `TRIBUTARY_SECRET_KEY`. Only `config-api` (and `tributary`) create the bootstrap token.
 */
export async function spawnTributaryApp(
  app: TributaryApp,
  options: SpawnOptions = {},
): Promise<TributaryProcess> {
  const main = options.built
    ? join(ROOT, 'dist', 'apps', app, 'src', 'main.js')
    : join(ROOT, 'apps', app, 'src', 'main.ts');
  if (options.built && !existsSync(main)) {
    throw new Error(`${main} is missing: build it first (node scripts/build-server.js builds every app)`);
  }
  const nodeArguments = options.built
    ? ['--enable-source-maps', main]
    : ['--enable-source-maps', '--require', REGISTER_HOOK, main];
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tributary-process-'));
  const adminToken = options.adminToken ?? generateAccessTokenSecret();
  const child = spawn(process.execPath, nodeArguments, {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      TMPDIR: process.env['TMPDIR'],
      PORT: String(options.port ?? 0),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      TRIBUTARY_BOOTSTRAP_TOKEN: adminToken,
      LOG_LEVEL: 'error',
      // A free port each: processes of parallel tests must not fight over 9464.
      METRICS_PORT: '0',
      // Tests deliver to fake vendors and webhooks on loopback, which the default (`public`) refuses;
      // a test of the policy itself passes its own.
      TRIBUTARY_EGRESS: 'open',
      ...options.environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill('SIGKILL');
      reject(new Error(`${app} did not start within ${options.startTimeoutMs ?? 60_000} ms:\n${output}`));
    }, options.startTimeoutMs ?? 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const listening = LISTENING.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1].replace(/\/$/, ''));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${app} exited (${signal ?? code}) before listening:\n${output}`));
    });
  });

  const metricsUrl = METRICS.exec(output)?.[1];
  if (!metricsUrl) {
    await kill('SIGKILL');
    throw new Error(`${app} printed no metrics listener line:\n${output}`);
  }
  return {
    baseUrl,
    port: Number(new URL(baseUrl).port),
    metricsUrl,
    adminToken,
    dataDir,
    child,
    output: () => output,
    kill,
  };
}
