// The views other views' changes carry (`ConfigChange`), in a file of their own: the projections fold
// them, and the projection contract (`config-projection.ts`) names them, so neither imports the other.
import type {
  DestinationRecord,
  FilterRecord,
  FunctionRecord,
  RegulationProgress,
  RegulationRecord,
  ReplayRecord,
} from '@tributary/config-domain';

export interface DestinationView {
  destination: DestinationRecord;
  filters: FilterRecord[];
  replays: ReplayRecord[];
  /** Dead letters (by dead-letter sequence) that a redrive delivered: no longer listed. */
  redrivenDeadLetters: ReadonlySet<number>;
  /** Redrives requested and not recorded yet, oldest first: the router's work to do. */
  pendingRedriveIds: string[];
}

/** A regulation as both APIs show it: the request and its progress. */
export interface RegulationView {
  readonly regulation: RegulationRecord;
  readonly progress: RegulationProgress;
}

/** A function as both APIs show it, and as the runners read the version they run. */
export interface FunctionView {
  readonly function: FunctionRecord;
}
