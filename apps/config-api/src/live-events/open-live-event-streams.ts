import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import type { ServerSentEventStream } from './server-sent-events';

/**
 * The live-events streams open in this process. A stream never ends by itself, and the HTTP server
 * waits for open requests when it closes, so a graceful stop ends them all first (Nest calls this
 * before it closes the HTTP server). Readers reconnect to another replica with `Last-Event-ID`.
 */
@Injectable()
export class OpenLiveEventStreams implements BeforeApplicationShutdown {
  private readonly streams = new Set<ServerSentEventStream>();
  private closing = false;

  /** False when the process is stopping: the caller should not start a stream. */
  add(stream: ServerSentEventStream): boolean {
    if (this.closing) return false;
    this.streams.add(stream);
    stream.onEnd(() => this.streams.delete(stream));
    return true;
  }

  get size(): number {
    return this.streams.size;
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    this.endAll();
  }

  /** Ends every open stream, as a stop does: each reader resumes with `Last-Event-ID`. */
  endAll(): void {
    for (const stream of [...this.streams]) stream.end();
  }
}
