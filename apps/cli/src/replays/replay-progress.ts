import { Presets, SingleBar } from 'cli-progress';
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
 * On a terminal: a cli-progress bar over the messages the replay's consumer has to get through
 * (settled of settled + remaining, as the server reports them while it runs), with the state and the
 * time. Written to stderr, so that stdout keeps only the replay (and `--json` stays parseable).
 */
export class ReplayProgressBar implements ReplayProgress {
  private readonly bar: SingleBar;
  private started = false;

  constructor(stream: OutputStream) {
    this.bar = new SingleBar(
      {
        stream: stream as unknown as NodeJS.WritableStream,
        format: 'replay [{bar}] {percentage}% | {value}/{total} settled | {state} | {duration_formatted}',
        hideCursor: true,
        barsize: 30,
      },
      Presets.shades_classic,
    );
  }

  update(replay: ReplayReading): void {
    const progress = replay.progress;
    const settled = progress?.settled ?? 0;
    // Until the router reports, a bar of one step; a finished replay fills its bar.
    const total = progress ? Math.max(1, progress.settled + progress.remaining) : 1;
    const value = replay.state === 'RUNNING' ? settled : total;
    const payload = { state: safeForTerminal(replay.state) };
    if (!this.started) {
      this.bar.start(total, value, payload);
      this.started = true;
      return;
    }
    this.bar.setTotal(total);
    this.bar.update(value, payload);
  }

  stop(): void {
    if (this.started) this.bar.stop();
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
