import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** How much of a server's log `output()` keeps. */
const HISTORY_CHARS = 2 * 1024 * 1024;

/**
 * A real nats-server with JetStream for tests: started on a free loopback port with its own store
 * directory, stoppable and restartable on the same port and store (to test outages and durability).
 *
 * The binary is `NATS_SERVER_BIN`, else `nats-server` on PATH, else `/usr/sbin/nats-server`.
 */
export class NatsServerProcess {
  private child: ChildProcess | undefined;
  private log = '';
  /** Everything the server wrote since it was first started, across restarts (bounded). */
  private history = '';

  private constructor(
    readonly binary: string,
    readonly port: number,
    readonly storeDirectory: string,
    private readonly ownsStoreDirectory: boolean,
    private readonly extraArguments: string[] = [],
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The server's process id while it runs (the bench reads its resident memory). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * What the server logged since it was first started, restarts included (the last 2 MB): a test that
   * fails can say what the cluster did (elections, lost quorum) around the moment it failed.
   */
  output(): string {
    return this.history;
  }

  /** Finds the binary or returns null, so a caller can say why it cannot run. */
  static findBinary(): string | null {
    const candidates = [
      process.env.NATS_SERVER_BIN,
      ...(process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((directory) => join(directory, 'nats-server')),
      '/usr/sbin/nats-server',
    ];
    for (const candidate of candidates) {
      if (!candidate) continue;
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not there, try the next
      }
    }
    return null;
  }

  static async start(
    options: { port?: number; storeDirectory?: string; extraArguments?: string[] } = {},
  ): Promise<NatsServerProcess> {
    const binary = NatsServerProcess.findBinary();
    if (!binary) {
      throw new Error('nats-server not found: install it, put it on PATH, or set NATS_SERVER_BIN');
    }
    const storeDirectory = options.storeDirectory ?? mkdtempSync(join(tmpdir(), 'tributary-nats-'));
    const server = new NatsServerProcess(
      binary,
      options.port ?? (await freePort()),
      storeDirectory,
      !options.storeDirectory,
      options.extraArguments,
    );
    await server.launch();
    return server;
  }

  /**
   * `size` servers routed into one JetStream cluster on loopback (each with its own store), for tests
   * of replicated streams. The cluster elects its JetStream leader a moment after the servers are up:
   * the first management calls may answer "temporarily unavailable" until then.
   */
  static async startCluster(size = 3): Promise<NatsServerProcess[]> {
    const clientPorts: number[] = [];
    const routePorts: number[] = [];
    // One at a time, so that no two probes are handed the same free port.
    for (let index = 0; index < size; index++) {
      clientPorts.push(await freePort());
      routePorts.push(await freePort());
    }
    const routes = routePorts.map((port) => `nats://127.0.0.1:${port}`).join(',');
    const servers: NatsServerProcess[] = [];
    try {
      for (let index = 0; index < size; index++) {
        servers.push(
          await NatsServerProcess.start({
            port: clientPorts[index],
            extraArguments: [
              '--server_name',
              `tributary-test-${index}`,
              '--cluster_name',
              'tributary-test',
              '--cluster',
              `nats://127.0.0.1:${routePorts[index]}`,
              // A server ignores the route to itself.
              '--routes',
              routes,
            ],
          }),
        );
      }
    } catch (error) {
      await Promise.all(servers.map((server) => server.dispose()));
      throw error;
    }
    return servers;
  }

  /** Stops the server (SIGTERM, then SIGKILL after 5 s); its data stays in the store directory. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const killTimer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killTimer);
  }

  /** Kills the server at once (SIGKILL), as a crashed machine would; `restart` starts it again. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops and starts again on the same port and store directory. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Stops the server and deletes the store directory if this launcher created it. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.ownsStoreDirectory) rmSync(this.storeDirectory, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    if (this.child) throw new Error('nats-server is already running');
    this.log = '';
    const args = [
      '-js',
      '-a',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-sd',
      this.storeDirectory,
      ...this.extraArguments,
    ];
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const output = (chunk: Buffer) => {
      // Keep the tail only: enough to explain a failed start.
      this.log = (this.log + chunk.toString()).slice(-8000);
      this.history = (this.history + chunk.toString()).slice(-HISTORY_CHARS);
    };
    child.stdout?.on('data', output);
    child.stderr?.on('data', output);
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });

    const deadline = Date.now() + 15_000;
    // "Server is ready" is logged once the client port listens and JetStream is enabled.
    while (!this.log.includes('Server is ready')) {
      if (!this.child) throw new Error(`nats-server exited during start:\n${this.log}`);
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`nats-server did not become ready within 15 s:\n${this.log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
