// Shared set-up for the CLI end-to-end suites: the CLI run in-process against a real server with
// captured output, the same CLI as a child process through bin/tributary.js, and a loopback proxy
// that can fail, hang or cut requests on their way to the tracking API.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runCli } from '../src/cli.program';
import type { CliContext } from '../src/shared/cli-context';

export const REPOSITORY_ROOT = join(__dirname, '..', '..', '..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, for runs with `--json`. */
  json(): any;
}

/** Runs the CLI in this process with the given environment (nothing is taken from process.env). */
export async function runCliInProcess(
  args: string[],
  options: { env?: Record<string, string | undefined>; interrupt?: AbortSignal; stderrIsTTY?: boolean } = {},
): Promise<CliRun> {
  return startCliInProcess(args, options).done;
}

export interface RunningCli {
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Aborts its interrupt signal, as Ctrl-C does. */
  interrupt(): void;
  done: Promise<CliRun>;
}

/** Starts the CLI in this process and lets the test watch its output while it runs (`tail`). */
export function startCliInProcess(
  args: string[],
  options: { env?: Record<string, string | undefined>; interrupt?: AbortSignal; stderrIsTTY?: boolean } = {},
): RunningCli {
  let stdout = '';
  let stderr = '';
  const interrupt = new AbortController();
  options.interrupt?.addEventListener('abort', () => interrupt.abort(), { once: true });
  const context: CliContext = {
    stdout: { write: (text: string) => (stdout += text), isTTY: false },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.stderrIsTTY ?? false, columns: 120 },
    env: options.env ?? {},
    interrupt: interrupt.signal,
  };
  const done = runCli(args, context).then((code) => ({
    code,
    stdout,
    stderr,
    json: () => {
      try {
        return JSON.parse(stdout);
      } catch {
        throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
      }
    },
  }));
  return { stdout: () => stdout, stderr: () => stderr, interrupt: () => interrupt.abort(), done };
}

/** Starts `node bin/tributary.js ...` from the TypeScript sources (not a possibly stale dist/). */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
): ChildProcess & { output: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [join(REPOSITORY_ROOT, 'bin', 'tributary.js'), ...args], {
    cwd: REPOSITORY_ROOT,
    env: { PATH: process.env.PATH ?? '', TRIBUTARY_CLI_FROM_SOURCE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return Object.assign(child, { output: () => ({ stdout, stderr }) });
}

export async function runCliChild(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const child = spawnCli(args, env);
  const [code] = (await once(child, 'exit')) as [number | null];
  const { stdout, stderr } = child.output();
  return { code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) };
}

/** What the proxy does with the n-th request (1-based). */
export type ProxyAction =
  | 'forward'
  /** Forward, let the server accept it, then answer 500 to the client as if it had failed. */
  | 'forward-then-fail'
  | 'destroy'
  | 'hang'
  | { status: number; headers?: Record<string, string>; body?: unknown };

export interface FaultyProxy {
  url: string;
  /** Requests seen so far, forwarded or not. */
  requests: number;
  /** Requests the server answered 200 (through the proxy). */
  forwardedOk: number;
  onRequest?: (index: number) => void;
  close(): Promise<void>;
}

/** An HTTP proxy to `targetUrl` whose behaviour per request is chosen by `plan(index)`. */
export async function startFaultyProxy(
  targetUrl: string,
  plan: (index: number) => ProxyAction,
): Promise<FaultyProxy> {
  const hanging = new Set<IncomingMessage>();
  const proxy: FaultyProxy = { url: '', requests: 0, forwardedOk: 0, close: async () => undefined };
  const server: Server = createServer(async (request, response) => {
    proxy.requests += 1;
    const index = proxy.requests;
    proxy.onRequest?.(index);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const action = plan(index);
    if (action === 'destroy') return request.socket.destroy();
    if (action === 'hang') return void hanging.add(request);
    if (typeof action === 'object') {
      response.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
      return response.end(
        JSON.stringify(
          action.body ?? { success: false, code: 'injected', message: 'injected', error: 'injected' },
        ),
      );
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'connection' && name !== 'content-length')
        headers[name] = value;
    }
    const upstream = await fetch(`${targetUrl}${request.url}`, {
      method: request.method,
      headers,
      body: Buffer.concat(chunks),
    });
    const text = await upstream.text();
    if (upstream.status === 200) proxy.forwardedOk += 1;
    if (action === 'forward-then-fail') {
      response.writeHead(500, { 'content-type': 'application/json' });
      return response.end(
        JSON.stringify({ success: false, code: 'internal', message: 'injected', error: 'injected' }),
      );
    }
    response.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
      ...(upstream.headers.get('retry-after') && { 'retry-after': upstream.headers.get('retry-after')! }),
    });
    response.end(text);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const request of hanging) request.socket.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

export interface GeneratedFile {
  lines: string[];
  /** The messageIds of lines that are valid messages the server accepts, by line number. */
  validIds: Map<number, string>;
  /** Each valid line's timestamp as sent. */
  timestamps: Map<string, string>;
  badLines: number[];
  /** Lines the server rejects, with the expected code. */
  rejected: Map<number, string>;
}

/**
 * An NDJSON history: `count` lines, mostly valid tracks and identifies with timestamps spread over
 * 2019 (each with a `sentAt` that the import must drop), some without a messageId, plus bad lines,
 * blank lines and messages the server rejects, at fixed positions.
 */
export function generateHistory(count: number, prefix: string): GeneratedFile {
  const lines: string[] = [];
  const validIds = new Map<number, string>();
  const timestamps = new Map<string, string>();
  const badLines: number[] = [];
  const rejected = new Map<number, string>();
  const start = Date.parse('2019-01-01T00:00:00.000Z');
  for (let index = 0; index < count; index++) {
    const line = index + 1;
    const timestamp = new Date(start + index * 3_600_123).toISOString();
    if (line % 397 === 0) {
      lines.push(
        [
          '{"type":"track",',
          '[1,2,3]',
          '42',
          '{"type":"track","userId":"u","event":"E","properties":{"pad":"' + 'x'.repeat(33_000) + '"}}',
        ][(line / 397 - 1) % 4],
      );
      badLines.push(line);
    } else if (line % 499 === 0) {
      lines.push('');
    } else if (line % 613 === 0) {
      lines.push(
        JSON.stringify({ type: 'track', userId: `u${line}`, messageId: `${prefix}-${line}`, timestamp }),
      );
      rejected.set(line, 'missing_event');
    } else if (line % 701 === 0) {
      lines.push(
        JSON.stringify({ type: 'identify', messageId: `${prefix}-${line}`, timestamp, traits: { a: 1 } }),
      );
      rejected.set(line, 'no_user_anon_id');
    } else {
      const withoutId = line % 10 === 3;
      const message: Record<string, unknown> = {
        type: line % 2 === 0 ? 'track' : 'identify',
        userId: `user-${line % 50}`,
        ...(line % 2 === 0
          ? { event: 'Order Completed', properties: { line, total: line / 10 } }
          : { traits: { line } }),
        timestamp,
        sentAt: '2019-12-31T23:59:59.000Z',
        ...(withoutId ? {} : { messageId: `${prefix}-${line}` }),
      };
      lines.push(JSON.stringify(message));
      if (!withoutId) validIds.set(line, `${prefix}-${line}`);
      else validIds.set(line, '');
      timestamps.set(`${line}`, timestamp);
    }
  }
  return { lines, validIds, timestamps, badLines, rejected };
}
