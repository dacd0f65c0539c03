import type { DestinationResource, ListResponses, SourceResource } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { CopyButton, ErrorMessage, Loaded, formatTime, lastSegment } from '../components/common';
import { Link, navigate } from '../router';

export function SourcePage({ workspace, source }: { workspace: string; source: string }) {
  const path = `workspaces/${workspace}/sources/${source}`;
  const loaded = useApi<SourceResource>(path);
  const destinations = useApi<ListResponses['destinations']>(`${path}/destinations?page_size=100`);
  return (
    <section>
      <p className="breadcrumbs">
        <Link to={`/workspaces/${workspace}`}>{workspace}</Link> / sources
      </p>
      <h1>Source {source}</h1>
      <Loaded state={loaded} what="the source">
        {(data) => <SourceDetails workspace={workspace} source={data} />}
      </Loaded>
      <h2>Destinations</h2>
      <Loaded state={destinations} what="the destinations">
        {({ destinations: list }) => (
          <DestinationList
            workspace={workspace}
            source={source}
            destinations={list}
            onChange={destinations.reload}
          />
        )}
      </Loaded>
      <p>
        <Link className="button" to={`/workspaces/${workspace}/sources/${source}/destinations/new`}>
          Add a destination
        </Link>
      </p>
      <DeleteSource workspace={workspace} source={source} />
    </section>
  );
}

/** What the Config API shows a `workspace:read` token instead of each write key. */
const MASKED_WRITE_KEY = '********';

function SourceDetails({ workspace, source }: { workspace: string; source: SourceResource }) {
  const shown = source.write_keys[0] ?? '';
  // A read-only token is never shown write keys (they let anyone ingest): the snippets say where it goes.
  const hidden = shown === MASKED_WRITE_KEY;
  const writeKey = hidden ? '<WRITE_KEY>' : shown;
  const origin = window.location.origin;
  const curl = `curl -u '${writeKey}:' -H 'Content-Type: application/json' \\
  -d '{"userId":"user-1","event":"Signed Up","properties":{"plan":"pro"}}' \\
  ${origin}/v1/track`;
  const node = `import { Analytics } from '@segment/analytics-node';

const analytics = new Analytics({ writeKey: '${writeKey}', host: '${origin}' });
analytics.track({ userId: 'user-1', event: 'Signed Up', properties: { plan: 'pro' } });
await analytics.closeAndFlush();`;
  return (
    <div className="card">
      <dl className="facts">
        <dt>Name</dt>
        <dd>{source.name}</dd>
        <dt>Kind</dt>
        <dd>{lastSegment(source.catalog_name)}</dd>
        <dt>Created</dt>
        <dd>{formatTime(source.create_time)}</dd>
        <dt>Write key</dt>
        <dd>
          {hidden ? (
            <span data-testid="write-key">hidden: this access token may only read</span>
          ) : (
            <>
              <code data-testid="write-key">{writeKey}</code>{' '}
              <CopyButton text={writeKey} label="Copy the write key" />
            </>
          )}
        </dd>
      </dl>
      <p>
        <Link className="button" to={`/workspaces/${workspace}/sources/${lastSegment(source.name)}/debugger`}>
          Open the live debugger
        </Link>
      </p>
      <h3>Send a first event with curl</h3>
      <pre>
        <code>{curl}</code>
      </pre>
      <CopyButton text={curl} label="Copy the curl command" />
      <h3>With analytics-node</h3>
      <pre>
        <code>{node}</code>
      </pre>
      <CopyButton text={node} label="Copy the analytics-node snippet" />
    </div>
  );
}

function DestinationList({
  workspace,
  source,
  destinations,
  onChange,
}: {
  workspace: string;
  source: string;
  destinations: DestinationResource[];
  onChange(): void;
}) {
  const { client } = useSession();
  const action = useAction();
  if (destinations.length === 0) return <p>No destination yet: messages are stored but go nowhere.</p>;
  const toggle = async (destination: DestinationResource) => {
    await action.run(() =>
      client.patch(destination.name, {
        destination: { enabled: !destination.enabled },
        update_mask: { paths: ['destination.enabled'] },
      }),
    );
    onChange();
  };
  return (
    <>
      <ErrorMessage error={action.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Destination</th>
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {destinations.map((destination) => (
            <tr key={destination.name}>
              <td>
                <Link
                  to={`/workspaces/${workspace}/sources/${source}/destinations/${lastSegment(destination.name)}`}
                >
                  {destination.display_name}
                </Link>
              </td>
              <td>
                <span className={destination.enabled ? 'badge ok' : 'badge'}>
                  {destination.enabled ? 'enabled' : 'disabled'}
                </span>
              </td>
              <td>
                <button type="button" onClick={() => toggle(destination)} disabled={action.busy}>
                  {destination.enabled ? 'Disable' : 'Enable'} {destination.display_name}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function DeleteSource({ workspace, source }: { workspace: string; source: string }) {
  const { client } = useSession();
  const action = useAction();
  const remove = async () => {
    if (!window.confirm(`Delete the source ${source}? Its write key stops working at once.`)) return;
    const done = await action.run(() => client.delete(`workspaces/${workspace}/sources/${source}`));
    if (done) navigate(`/workspaces/${workspace}`);
  };
  return (
    <div className="danger-zone">
      <ErrorMessage error={action.error} />
      <button type="button" className="danger" onClick={remove} disabled={action.busy}>
        Delete this source
      </button>
    </div>
  );
}
