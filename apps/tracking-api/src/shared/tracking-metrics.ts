import { Injectable } from '@nestjs/common';
import { METRIC_PREFIX, MetricsRegistry } from '@tributary/platform';
import { Counter, Histogram } from 'prom-client';
import { TrackingCounters } from './tracking-counters';

/** Seconds; a local SQLite commit takes about a millisecond, a JetStream round trip a few. */
const PUBLISH_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The tracking API's metrics. Outcomes stay plain numbers in `TrackingCounters` (an addition on the
 * ingest path) and are copied into the counter when Prometheus scrapes; the publish latency is one
 * histogram observation per request.
 */
@Injectable()
export class TrackingMetrics {
  readonly publishDuration: Histogram;

  constructor(registry: MetricsRegistry, counters: TrackingCounters) {
    new Counter({
      name: `${METRIC_PREFIX}tracking_messages_total`,
      help:
        'Tracking API outcomes: messages accepted, duplicate (already stored) or rejected (invalid); ' +
        'requests refused for an unknown write key, or answered 503 because the log was unavailable.',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ outcome: 'accepted' }, counters.accepted);
        this.inc({ outcome: 'duplicate' }, counters.duplicates);
        this.inc({ outcome: 'rejected' }, counters.rejected);
        this.inc({ outcome: 'refused_write_key' }, counters.refusedWriteKeys);
        this.inc({ outcome: 'unavailable' }, counters.unavailable);
      },
    });
    // The regulations page names the counter `suppressed_messages_total`, the issue that asked for it
    // `messages_suppressed_total`: both are served, from the same counts.
    for (const name of ['suppressed_messages_total', 'messages_suppressed_total']) {
      new Counter({
        name: `${METRIC_PREFIX}${name}`,
        help: 'Messages dropped at ingest because their userId is suppressed by a regulation, by workspace.',
        labelNames: ['workspace'],
        registers: [registry],
        collect() {
          this.reset();
          for (const [workspace, count] of counters.suppressedByWorkspace) this.inc({ workspace }, count);
        },
      });
    }
    this.publishDuration = new Histogram({
      name: `${METRIC_PREFIX}event_log_publish_duration_seconds`,
      help: 'Time for the event log to durably store (or recognise as duplicates) the messages of one tracking request.',
      buckets: PUBLISH_BUCKETS,
      registers: [registry],
    });
  }
}
