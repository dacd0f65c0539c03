import type { ServerResponse } from 'node:http';

/** How one live-events stream treats its reader; the defaults are what the Config API serves. */
export class LiveEventLimits {
  /** A comment this often keeps proxies and load balancers from closing an idle stream. */
  keepAliveIntervalMs = 15_000;
  /** Bytes written but not yet taken by the reader's connection before the stream waits for it. */
  maxBufferedBytes = 1024 * 1024;
  /** How long the stream waits for a reader that stopped taking bytes before it drops the reader. */
  slowReaderTimeoutMs = 10_000;
  /** What a browser's `EventSource` waits before reconnecting (sent as `retry:`). */
  reconnectDelayMs = 2_000;
  /** Streams one caller (token) may hold open at once in this process: `LIVE_EVENTS_MAX_STREAMS_PER_TOKEN`. */
  maxStreamsPerReader = 5;
  /** Streams open at once on one workspace's sources in this process: `LIVE_EVENTS_MAX_STREAMS_PER_WORKSPACE`. */
  maxStreamsPerWorkspace = 20;
  /** Streams open at once in this process, all workspaces together: `LIVE_EVENTS_MAX_STREAMS`. */
  maxStreams = 200;
}

export type StreamEnd = 'reader-closed' | 'reader-too-slow' | 'server-ended';

/**
 * One `text/event-stream` response: events written in order, a comment every keep-alive interval,
 * and a bounded buffer. When the reader's connection holds more than `maxBufferedBytes` and does not
 * drain within `slowReaderTimeoutMs`, the reader is dropped (the connection is closed) instead of
 * buffering without limit; it resumes without loss by reconnecting with `Last-Event-ID`.
 */
export class ServerSentEventStream {
  private keepAlive: NodeJS.Timeout | undefined;
  private endReason: StreamEnd | undefined;
  private readonly endListeners: ((reason: StreamEnd) => void)[] = [];

  constructor(
    private readonly response: ServerResponse,
    private readonly limits: LiveEventLimits,
  ) {}

  get ended(): boolean {
    return this.endReason !== undefined;
  }

  /** Sends the head and a first comment, so the reader knows at once the stream is open. */
  open(headers: Record<string, string> = {}): void {
    this.response.on('close', () => this.finish('reader-closed'));
    this.response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx buffers proxied responses unless told otherwise, which would hold events back.
      'x-accel-buffering': 'no',
      ...headers,
    });
    this.response.write(`retry: ${this.limits.reconnectDelayMs}\n: live events\n\n`);
    this.keepAlive = setInterval(() => {
      if (!this.ended) this.response.write(': keep-alive\n\n');
    }, this.limits.keepAliveIntervalMs);
    this.keepAlive.unref();
  }

  onEnd(listener: (reason: StreamEnd) => void): void {
    if (this.endReason) listener(this.endReason);
    else this.endListeners.push(listener);
  }

  /**
   * Writes one event. Resolves once the reader's buffer has room for the next one, which makes the
   * caller wait for a slow reader; ends the stream when that takes longer than the limit.
   */
  async send(id: number, data: string): Promise<void> {
    if (this.ended) return;
    // `data` is JSON.stringify output: it has no raw line breaks, so it fits on one `data:` line.
    this.response.write(`id: ${id}\ndata: ${data}\n\n`);
    if (this.response.writableLength <= this.limits.maxBufferedBytes) return;
    const drained = await this.untilDrained(this.limits.slowReaderTimeoutMs);
    if (!drained && !this.ended) {
      this.finish('reader-too-slow');
      // Ending gracefully would wait for the very backlog the reader does not take.
      this.response.destroy();
    }
  }

  end(): void {
    if (this.ended) return;
    this.finish('server-ended');
    this.response.end();
  }

  private untilDrained(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.response.off('drain', onDrain);
        this.response.off('close', onClose);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.response.on('drain', onDrain);
      this.response.on('close', onClose);
    });
  }

  private finish(reason: StreamEnd): void {
    if (this.endReason) return;
    this.endReason = reason;
    clearInterval(this.keepAlive);
    for (const listener of this.endListeners.splice(0)) listener(reason);
  }
}
