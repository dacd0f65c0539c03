import type { OutputStream } from '../shared/cli-context';
import { safeForTerminal } from '../shared/terminal-text';

/** What a replay's progress shows of the replay resource the Config API answers. */
export interface ReplayReading {
  name: string;
  state: string;
  counts: Record<string, number> | null;
  progress?: { settled: number; remaining: number } | null;
}

export interface ReplayProgress {
  update(replay: ReplayReading, elapsedMs: number): void;
  stop(): void;
}

function countsText(counts: Record<string, number> | null): string {
  if (!counts) return '';
  return Object.entries(counts)
    .map(([outcome, count]) => `${count} ${outcome.replace('_', '-')}`)
    .join(', ');
}

/**
 * On a terminal: one line redrawn in place, a bar over the messages settled of those to send while
 * the server knows both, the state and the time otherwise. Written to stderr, so that stdout keeps
 * only the replay (and `--json` stays parseable).
 */
export class ReplayProgressBar implements ReplayProgress {
  private drawn = false;

  constructor(private readonly stream: OutputStream) {}

  update(replay: ReplayReading, elapsedMs: number): void {
    const id = replay.name.slice(replay.name.lastIndexOf('/') + 1);
    let line = `replay ${id} ${replay.state} ${(elapsedMs / 1000).toFixed(0)} s`;
    const progress = replay.progress;
    if (progress && progress.settled + progress.remaining > 0) {
      const total = progress.settled + progress.remaining;
      const filled = Math.round((30 * progress.settled) / total);
      line =
        `replay ${id} [${'█'.repeat(filled)}${'░'.repeat(30 - filled)}] ` +
        `${Math.floor((100 * progress.settled) / total)}% | ${progress.settled}/${total} | ${(elapsedMs / 1000).toFixed(0)} s`;
    } else if (replay.counts) {
      line += ` | ${countsText(replay.counts)}`;
    }
    this.stream.write(`\r\x1b[2K${safeForTerminal(line)}`);
    this.drawn = true;
  }

  stop(): void {
    if (this.drawn) this.stream.write('\n');
  }
}

/** In a log or a pipe: a line when the state changes, and one every `intervalMs` while it runs. */
export class PlainReplayProgress implements ReplayProgress {
  private lastPrinted = -Infinity;
  private lastState = '';

  constructor(
    private readonly stream: OutputStream,
    private readonly intervalMs: number,
  ) {}

  update(replay: ReplayReading, elapsedMs: number): void {
    if (replay.state === this.lastState && elapsedMs - this.lastPrinted < this.intervalMs) return;
    this.lastPrinted = elapsedMs;
    this.lastState = replay.state;
    const progress = replay.progress;
    const detail = progress
      ? `, ${progress.settled} settled, ${progress.remaining} to go`
      : replay.counts
        ? `: ${countsText(replay.counts)}`
        : '';
    this.stream.write(
      safeForTerminal(
        `replay ${replay.name}: ${replay.state} after ${(elapsedMs / 1000).toFixed(0)} s${detail}`,
      ) + '\n',
    );
  }

  stop(): void {}
}
