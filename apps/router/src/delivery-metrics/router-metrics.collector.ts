import { Inject, Injectable } from '@nestjs/common';
import { ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { DEAD_LETTER_CAUSES, DELIVERY_OUTCOMES } from '@tributary/contracts';
import { DEAD_LETTERS, TRACKING_LOG, type DeadLetters, type TrackingLog } from '@tributary/event-log';
import { METRIC_PREFIX, MetricsRegistry, readWithin } from '@tributary/platform';
import { Counter, Gauge } from 'prom-client';
import { destinationConsumerName, destinationKey } from '../destination-consumers/consumer-names';
import { DeliveryMetrics, DISCARD_CAUSES, VALUE_NOT_STORED_CAUSES } from './delivery-metrics';

/** A scrape waits at most this long for the log's answers; a destination that misses it is left out. */
const LOG_READ_DEADLINE_MS = 2_000;
/** Dead letters read per destination per scrape: the depth is exact up to this and reported as this beyond. */
export const DEAD_LETTER_DEPTH_CAP = 1_000;

const DESTINATION_LABELS = ['source_id', 'destination'] as const;
type DestinationLabel = (typeof DESTINATION_LABELS)[number];

/**
 * The router's metrics per destination, all read when Prometheus scrapes, never on the delivery
 * path: outcome counts from `DeliveryMetrics`, and the consumer lag and dead-letter depth asked of
 * the event log (in parallel, within a deadline).
 */
@Injectable()
export class RouterMetricsCollector {
  constructor(
    registry: MetricsRegistry,
    deliveryMetrics: DeliveryMetrics,
    readModel: ConfigReadModel,
    @Inject(TRACKING_LOG) trackingLog: TrackingLog,
    @Inject(DEAD_LETTERS) deadLetters: DeadLetters,
  ) {
    const labelsOf = (view: DestinationView) => ({
      source_id: view.destination.sourceId,
      destination: view.destination.destinationSlug,
    });

    new Counter({
      name: `${METRIC_PREFIX}deliveries_total`,
      help: 'Router outcomes per destination since the process started: delivered, discarded, retried, filtered, skipped, dead_lettered.',
      labelNames: [...DESTINATION_LABELS, 'outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const view of readModel.listAllDestinations()) {
          const counts = deliveryMetrics.countsOf(
            destinationKey(view.destination.sourceId, view.destination.destinationSlug),
          );
          if (!counts) continue;
          for (const outcome of DELIVERY_OUTCOMES) this.inc({ ...labelsOf(view), outcome }, counts[outcome]);
        }
      },
    });

    /** One counter per cause of a destination's `causesOf` tally, read at each scrape. */
    const causeCounter = <Cause extends string>(
      name: string,
      help: string,
      causes: readonly Cause[],
      tally: (of: NonNullable<ReturnType<DeliveryMetrics['causesOf']>>) => Readonly<Record<Cause, number>>,
    ) =>
      new Counter({
        name: `${METRIC_PREFIX}${name}`,
        help,
        labelNames: [...DESTINATION_LABELS, 'cause'],
        registers: [registry],
        collect() {
          this.reset();
          for (const view of readModel.listAllDestinations()) {
            const tallies = deliveryMetrics.causesOf(
              destinationKey(view.destination.sourceId, view.destination.destinationSlug),
            );
            if (!tallies) continue;
            const counts = tally(tallies);
            for (const cause of causes) this.inc({ ...labelsOf(view), cause }, counts[cause]);
          }
        },
      });
    causeCounter(
      'destination_values_not_stored_total',
      'Values of delivered messages a destination did not store as sent, since the process started: cause=type_conflict (stored as null), cause=column_limit (column not created).',
      VALUE_NOT_STORED_CAUSES,
      (tallies) => tallies.valuesNotStored,
    );
    causeCounter(
      'destination_refusals_total',
      "Messages discarded because a destination's guard refused them, since the process started: cause=system_schema, foreign_table (a table Tributary did not create), table_limit, egress_denied (the egress policy refused the target).",
      DISCARD_CAUSES,
      (tallies) => tallies.discardsByCause,
    );
    causeCounter(
      'destination_dead_lettered_total',
      'Messages a destination dead-lettered, since the process started: cause=retries_exhausted (the retry window ran out), cause=poison (its deliveries kept ending without an outcome: the router delivering it died or stalled each time).',
      DEAD_LETTER_CAUSES,
      (tallies) => tallies.deadLettersByCause,
    );

    const consumerLag = new Gauge<DestinationLabel | 'state'>({
      name: `${METRIC_PREFIX}destination_consumer_lag_messages`,
      help: "Messages of a destination's durable consumer not yet delivered (state=undelivered) or delivered but not yet settled (state=unacknowledged).",
      labelNames: [...DESTINATION_LABELS, 'state'],
      registers: [registry],
      collect: () => readOnce(),
    });
    const deadLetterDepth = new Gauge<DestinationLabel>({
      name: `${METRIC_PREFIX}destination_dead_letters`,
      help: `Dead letters of a destination not redriven, within retention (read up to ${DEAD_LETTER_DEPTH_CAP} per destination).`,
      labelNames: [...DESTINATION_LABELS],
      registers: [registry],
      collect: () => readOnce(),
    });

    // prom-client collects every metric of a scrape at once: both gauges join one read of the log.
    let pendingRead: Promise<void> | undefined;
    const readFromLog = async () => {
      consumerLag.reset();
      deadLetterDepth.reset();
      await Promise.all(
        readModel.listAllDestinations().map(async (view) => {
          const labels = labelsOf(view);
          const consumerName = destinationConsumerName(labels.source_id, labels.destination);
          const [lag, letters] = await Promise.all([
            readWithin(LOG_READ_DEADLINE_MS, () => trackingLog.consumerLag(consumerName)),
            readWithin(LOG_READ_DEADLINE_MS, () =>
              deadLetters.listDeadLetters({ consumerName, limit: DEAD_LETTER_DEPTH_CAP }),
            ),
          ]);
          if (lag) {
            consumerLag.set({ ...labels, state: 'undelivered' }, lag.undelivered);
            consumerLag.set({ ...labels, state: 'unacknowledged' }, lag.unacknowledged);
          }
          if (letters) {
            const waiting = letters.filter(
              (letter) => !view.redrivenDeadLetters.has(letter.deadLetterSequence),
            ).length;
            deadLetterDepth.set(labels, waiting);
          }
        }),
      );
    };
    const readOnce = () => {
      pendingRead ??= readFromLog().finally(() => (pendingRead = undefined));
      return pendingRead;
    };
  }
}
