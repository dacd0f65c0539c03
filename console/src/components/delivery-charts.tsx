import type { DeliveryMetricsResource, DeliveryOutcome } from '@tributary/contracts';

const SERIES: { outcome: DeliveryOutcome; label: string; className: string }[] = [
  { outcome: 'delivered', label: 'Delivered', className: 'delivered' },
  { outcome: 'retried', label: 'Retried', className: 'retried' },
  { outcome: 'discarded', label: 'Discarded', className: 'discarded' },
  { outcome: 'dead_lettered', label: 'Dead-lettered', className: 'dead-lettered' },
];

const WIDTH = 600;
const HEIGHT = 140;

/** Minute bars of one count over the last hour, as an SVG with a text summary for screen readers. */
function BarChart({
  title,
  values,
  className,
  unit,
}: {
  title: string;
  values: (number | null)[];
  className: string;
  unit: string;
}) {
  const max = Math.max(1, ...values.map((value) => value ?? 0));
  const total = values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
  const barWidth = WIDTH / values.length;
  const summary = unit === 'ms' ? `highest ${max} ms` : `${total} in the last hour`;
  return (
    <figure className="chart" data-testid={`chart-${className}`}>
      <figcaption>
        <strong>{title}</strong>{' '}
        <span className="muted" data-testid={`chart-${className}-total`}>
          {summary}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${title}: ${summary}, minute by minute`}
        preserveAspectRatio="none"
      >
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} className="axis" />
        {values.map((value, index) =>
          value ? (
            <rect
              key={index}
              className={`bar ${className}`}
              x={index * barWidth + 1}
              width={Math.max(1, barWidth - 2)}
              y={HEIGHT - (value / max) * (HEIGHT - 10)}
              height={(value / max) * (HEIGHT - 10)}
            >
              <title>{`${value}${unit === 'ms' ? ' ms' : ''}`}</title>
            </rect>
          ) : null,
        )}
      </svg>
      <div className="chart-scale muted">
        <span>60 min ago</span>
        <span>
          max {max}
          {unit === 'ms' ? ' ms' : ''}
        </span>
        <span>now</span>
      </div>
    </figure>
  );
}

export function DeliveryCharts({ metrics }: { metrics: DeliveryMetricsResource }) {
  const buckets = metrics.last_hour.buckets;
  return (
    <div className="charts">
      {SERIES.map((series) => (
        <BarChart
          key={series.outcome}
          title={series.label}
          className={series.className}
          unit="count"
          values={buckets.map((bucket) => bucket.counts[series.outcome])}
        />
      ))}
      <BarChart
        title="Latency p95"
        className="latency"
        unit="ms"
        values={buckets.map((bucket) => bucket.latency_ms.p95)}
      />
      <table className="compact">
        <caption>Since the router started</caption>
        <tbody>
          {Object.entries(metrics.counts).map(([outcome, count]) => (
            <tr key={outcome}>
              <th scope="row">{outcome.replace('_', ' ')}</th>
              <td data-testid={`count-${outcome}`}>{count}</td>
            </tr>
          ))}
          <tr>
            <th scope="row">latency p50 / p95 (last hour)</th>
            <td>
              {metrics.latency_ms.last_hour?.p50 ?? '—'} / {metrics.latency_ms.last_hour?.p95 ?? '—'} ms
            </td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}
