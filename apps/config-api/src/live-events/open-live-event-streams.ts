import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { LiveEventLimits, type ServerSentEventStream } from './server-sent-events';

/** Who a stream is open for: the caller (`access-tokens/…`) and the workspace it reads. */
export interface LiveEventReader {
  actor: string;
  workspaceSlug: string;
}

/** Why no stream may open now. */
export type LiveEventRefusal = 'stopping' | 'reader-full' | 'workspace-full' | 'process-full';

/** A place held for one stream while its tail starts: attach the stream, or release the place. */
export interface LiveEventClaim {
  /** False (and the place released) when the process began stopping meanwhile. */
  attach(stream: ServerSentEventStream): boolean;
  release(): void;
}

/**
 * The live-events streams open in this process. A stream never ends by itself, and the HTTP server
 * waits for open requests when it closes, so a graceful stop ends them all first (Nest calls this
 * before it closes the HTTP server). Readers reconnect to another replica with `Last-Event-ID`.
 *
 * Each stream is its own log consumer with its own buffer, so their number is capped per caller,
 * per workspace and per process: a read token opening streams without end would otherwise cost
 * every tenant the process's memory and the log's consumers. A place is claimed before the tail
 * starts, so concurrent requests cannot overshoot a cap.
 */
@Injectable()
export class OpenLiveEventStreams implements BeforeApplicationShutdown {
  private readonly streams = new Set<ServerSentEventStream>();
  private readonly perReader = new Map<string, number>();
  private readonly perWorkspace = new Map<string, number>();
  private claimed = 0;
  private closing = false;

  constructor(private readonly limits: LiveEventLimits) {}

  /** A place for one more stream of this reader, or why there is none. */
  claim(reader: LiveEventReader): LiveEventClaim | LiveEventRefusal {
    if (this.closing) return 'stopping';
    if ((this.perReader.get(reader.actor) ?? 0) >= this.limits.maxStreamsPerReader) return 'reader-full';
    if ((this.perWorkspace.get(reader.workspaceSlug) ?? 0) >= this.limits.maxStreamsPerWorkspace) {
      return 'workspace-full';
    }
    if (this.claimed >= this.limits.maxStreams) return 'process-full';
    count(this.perReader, reader.actor, 1);
    count(this.perWorkspace, reader.workspaceSlug, 1);
    this.claimed += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      count(this.perReader, reader.actor, -1);
      count(this.perWorkspace, reader.workspaceSlug, -1);
      this.claimed -= 1;
    };
    return {
      attach: (stream) => {
        if (this.closing) {
          release();
          return false;
        }
        this.streams.add(stream);
        stream.onEnd(() => {
          this.streams.delete(stream);
          release();
        });
        return true;
      },
      release,
    };
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

function count(counts: Map<string, number>, key: string, change: number): void {
  const next = (counts.get(key) ?? 0) + change;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
