/** A program for the lanes' own tests: tasks that answer, throw, never yield, fill the heap or crash. */
import type { LaneServices, LaneTasks } from '../execution-lane.port';

export async function startLaneProgram(
  data: { greeting: string },
  services: LaneServices,
): Promise<LaneTasks> {
  return {
    echo: async (input: unknown) => ({ greeting: data.greeting, input }),
    wait: (milliseconds: number) =>
      new Promise((resolve) => setTimeout(() => resolve(milliseconds), milliseconds)),
    throw: async (message: string) => {
      throw new Error(message);
    },
    spin: async () => {
      for (;;);
    },
    fillHeap: async () => {
      const kept: number[][] = [];
      for (;;) kept.push(Array.from({ length: 100_000 }, (_, index) => index + kept.length));
    },
    askParent: (name: string) => services.call('double', name),
    /** Ends what runs the program, as a native crash would. */
    crash: async () => {
      setImmediate(() => process.exit(3));
      return new Promise(() => undefined);
    },
    pid: async () => process.pid,
  };
}
