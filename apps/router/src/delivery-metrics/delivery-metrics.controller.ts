import { Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ConfigApiController, DestinationInPath } from '@tributary/config-api-access';
import type { DestinationView } from '@tributary/config-projections';
import { catalogSlugOf } from '@tributary/config-domain';
import { destinationName } from '@tributary/contracts';
import { DestinationDeliveries } from '../destination-consumers/destination-deliveries.service';
import { destinationKey } from '../destination-consumers/consumer-names';
import { DeliveryMetrics, SERIES_BUCKET_MS } from './delivery-metrics';

/**
 * Delivery metrics of one destination since the router started: counts by outcome and end-to-end
 * latency percentiles over recent windows, and the last hour minute by minute (`last_hour`). Segment's response shape is unknown (docs/config-api.md §2.8), so
 * this one is Tributary's own; `:getSummary` answers the same.
 */
@ApiTags('delivery metrics')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations/:destination/metrics')
export class DeliveryMetricsController {
  constructor(
    private readonly metrics: DeliveryMetrics,
    private readonly deliveries: DestinationDeliveries,
  ) {}

  @Get()
  summary(@DestinationInPath() { destination }: DestinationView) {
    const { destinationSlug } = destination;
    const snapshot = this.metrics.snapshot(destinationKey(destination.sourceId, destinationSlug));
    const name = destinationName(destination);
    return {
      name: `${name}/metrics`,
      destination_name: name,
      counts: snapshot.counts,
      latency_ms: Object.fromEntries(
        Object.entries(snapshot.latency).map(([window, value]) => [
          window,
          { p50: value.p50, p95: value.p95, samples: value.samples },
        ]),
      ),
      recent_discards: snapshot.lastDiscardReasons.map((discard) => ({
        message_id: discard.messageId,
        reason: discard.reason,
        time: discard.at,
      })),
      discards_by_cause: snapshot.discardsByCause,
      // The lane stopped running this destination (repeated overruns) until its settings change.
      suspension: this.deliveries.suspensionOf(destination.sourceId, catalogSlugOf(destination)) ?? null,
      dead_letters_by_cause: snapshot.deadLettersByCause,
      // A warehouse's values that were not stored as sent: a type conflict (stored as null) or a
      // column past the destination's column limit (left out). The rows themselves were delivered.
      values_not_stored: snapshot.valuesNotStored,
      recent_values_not_stored: snapshot.lastValuesNotStored.map((value) => ({
        message_id: value.messageId,
        cause: value.cause,
        table: value.table,
        column: value.column,
        reason: value.reason,
        time: value.at,
      })),
      last_hour: {
        bucket_seconds: SERIES_BUCKET_MS / 1000,
        buckets: this.metrics.series(destinationKey(destination.sourceId, destinationSlug)).map((bucket) => ({
          start_time: bucket.start,
          counts: bucket.counts,
          latency_ms: bucket.latency,
        })),
      },
    };
  }

  @Get('@getSummary')
  getSummary(@DestinationInPath() view: DestinationView) {
    return this.summary(view);
  }
}
