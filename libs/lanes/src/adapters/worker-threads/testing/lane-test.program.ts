/** A program for the lane's own tests: tasks that answer, throw, never yield, or fill the heap. */
import type { LaneServices, LaneTasks } from '../../../execution-lane.port';

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
  };
}
