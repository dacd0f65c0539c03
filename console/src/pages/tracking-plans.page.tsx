import type { ListResponses, TrackingPlanResource } from '@tributary/contracts';
import { useApi } from '../api/use-api';
import { Loaded, formatTime, lastSegment } from '../components/common';
import { Link } from '../router';

export function TrackingPlansPage({ workspace }: { workspace: string }) {
  const plans = useApi<ListResponses['trackingPlans']>(
    `workspaces/${workspace}/tracking-plans?page_size=100`,
  );
  return (
    <section>
      <h1>Tracking plans of {workspace}</h1>
      <Loaded state={plans} what="the tracking plans">
        {({ tracking_plans: list }) =>
          list.length === 0 ? (
            <p>No tracking plan. Create one with the Config API or typewriter; it shows here.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Plan</th>
                  <th scope="col">Events</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.map((plan) => (
                  <tr key={plan.name}>
                    <td>
                      <Link to={`/workspaces/${workspace}/tracking-plans/${lastSegment(plan.name)}`}>
                        {plan.display_name}
                      </Link>
                    </td>
                    <td>{plan.rules.events.length}</td>
                    <td>{formatTime(plan.update_time)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}

export function TrackingPlanPage({ workspace, planId }: { workspace: string; planId: string }) {
  const plan = useApi<TrackingPlanResource>(`workspaces/${workspace}/tracking-plans/${planId}`);
  const connections = useApi<{ connections: { source_name: string }[] }>(
    `workspaces/${workspace}/tracking-plans/${planId}/source-connections`,
  );
  return (
    <section>
      <p className="breadcrumbs">
        <Link to={`/workspaces/${workspace}/tracking-plans`}>tracking plans</Link>
      </p>
      <Loaded state={plan} what="the tracking plan">
        {(data) => (
          <>
            <h1>{data.display_name}</h1>
            <p className="muted">
              {data.name} · updated {formatTime(data.update_time)}
            </p>
            <h2>Connected sources</h2>
            <Loaded state={connections} what="the connected sources">
              {({ connections: list }) =>
                list.length === 0 ? (
                  <p>No source is connected to this plan.</p>
                ) : (
                  <ul>
                    {list.map((connection) => (
                      <li key={connection.source_name}>
                        <Link to={`/workspaces/${workspace}/sources/${lastSegment(connection.source_name)}`}>
                          {connection.source_name}
                        </Link>
                      </li>
                    ))}
                  </ul>
                )
              }
            </Loaded>
            <h2>Events ({data.rules.events.length})</h2>
            {data.rules.events.map((event) => (
              <details key={`${event.name}-${event.version ?? 1}`} className="card">
                <summary>
                  <strong>{event.name}</strong> <span className="muted">v{event.version ?? 1}</span>{' '}
                  {event.description}
                </summary>
                <pre>
                  <code>{JSON.stringify(event.rules, null, 2)}</code>
                </pre>
              </details>
            ))}
            {(['global', 'identify', 'group'] as const).map((key) =>
              data.rules[key] ? (
                <details key={key} className="card">
                  <summary>
                    <strong>{key}</strong> rules
                  </summary>
                  <pre>
                    <code>{JSON.stringify(data.rules[key], null, 2)}</code>
                  </pre>
                </details>
              ) : null,
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
