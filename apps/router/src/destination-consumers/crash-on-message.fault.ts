/** The environment variable the poison-message tests set; never set in a deployment. */
export const CRASH_ON_MESSAGE_VARIABLE = 'TRIBUTARY_TEST_ROUTER_CRASH_ON_MESSAGE';

/**
 * `TRIBUTARY_TEST_ROUTER_CRASH_ON_MESSAGE=<messageId>`: the router kills itself with SIGKILL each time
 * it is about to call a destination with that message, as an out-of-memory kill or a native crash in
 * a destination's code would. Absent: undefined, and a delivery pays one comparison with it.
 */
export function crashOnMessageFromEnvironment(
  environment: Record<string, string | undefined>,
): string | undefined {
  const messageId = environment[CRASH_ON_MESSAGE_VARIABLE]?.trim();
  return messageId ? messageId : undefined;
}

/** SIGKILL to itself: the kernel ends the process before the call returns. */
export function crashNow(): void {
  process.kill(process.pid, 'SIGKILL');
}
