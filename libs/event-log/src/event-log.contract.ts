import { describeAttemptHistoryContract } from './contracts/attempt-history.contract';
import { describeDeadLettersContract } from './contracts/dead-letters.contract';
import type { EventLogContractFactory } from './contracts/event-log-harness.contract';
import { describeLeasesContract } from './contracts/leases.contract';
import { describeMessageErasureContract } from './contracts/message-erasure.contract';
import { describeSeenOnceContract } from './contracts/seen-once.contract';
import { describeTrackingLogContract } from './contracts/tracking-log.contract';

export { sleep, waitUntil, type EventLogContractFactory } from './contracts/event-log-harness.contract';

/**
 * Every contract suite of the log's ports (one per port, in `contracts/`), run over one engine:
 * adapter specs call this with a factory that hands out fresh, isolated storage. The Protocols
 * outcomes and function logs suites have their own entry points.
 */
export function describeEventLogContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describeTrackingLogContract(adapterName, getFactory);
  describeDeadLettersContract(adapterName, getFactory);
  describeAttemptHistoryContract(adapterName, getFactory);
  describeLeasesContract(adapterName, getFactory);
  describeSeenOnceContract(adapterName, getFactory);
  describeMessageErasureContract(adapterName, getFactory);
}
