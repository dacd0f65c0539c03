import { useState, type FormEvent } from 'react';
import type {
  CatalogDestination,
  CatalogDestinationActions,
  DeliveryMetricsResource,
  DestinationResource,
  ListResponses,
  ReplayResource,
} from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, formatTime, lastSegment } from '../components/common';
import { DeliveryCharts } from '../components/delivery-charts';
import { FiltersSection } from '../components/filters-section';
import { initialValue, settingValue, type SettingValues } from '../components/setting-values';
import { SettingsFields } from '../components/settings-form';
import { SubscriptionsEditor } from '../components/subscriptions-editor';
import {
  SUBSCRIPTIONS_SETTING,
  draftsOf,
  subscriptionsValue,
  type SubscriptionDraft,
} from '../components/subscriptions';
import { Link, navigate } from '../router';

export function DestinationPage({
  workspace,
  source,
  destination,
}: {
  workspace: string;
  source: string;
  destination: string;
}) {
  const name = `workspaces/${workspace}/sources/${source}/destinations/${destination}`;
  const loaded = useApi<DestinationResource>(name);
  return (
    <section>
      <p className="breadcrumbs">
        <Link to={`/workspaces/${workspace}`}>{workspace}</Link> /{' '}
        <Link to={`/workspaces/${workspace}/sources/${source}`}>{source}</Link> / destinations
      </p>
      <Loaded state={loaded} what="the destination">
        {(data) => (
          <>
            <h1>
              {data.display_name}{' '}
              <span className={data.enabled ? 'badge ok' : 'badge'}>
                {data.enabled ? 'enabled' : 'disabled'}
              </span>
            </h1>
            <EnableToggle destination={data} onChange={loaded.reload} />
            <nav className="in-page" aria-label="On this page">
              <a href="#delivery-heading">Delivery</a> <a href="#dead-letters-heading">Dead letters</a>{' '}
              <a href="#replays-heading">Replays</a> <a href="#filters-heading">Filters</a>{' '}
              <a href="#settings-heading">Settings</a>
            </nav>
            <DeliverySection destinationName={name} />
            <DeadLettersSection destinationName={name} />
            <ReplaysSection destinationName={name} />
            <FiltersSection destinationName={name} />
            <SettingsSection destination={data} onSaved={loaded.reload} />
            <DeleteDestination workspace={workspace} source={source} destination={data} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function EnableToggle({ destination, onChange }: { destination: DestinationResource; onChange(): void }) {
  const { client } = useSession();
  const action = useAction();
  const toggle = async () => {
    await action.run(() =>
      client.patch(destination.name, {
        destination: { enabled: !destination.enabled },
        update_mask: { paths: ['destination.enabled'] },
      }),
    );
    onChange();
  };
  return (
    <p>
      <button type="button" onClick={toggle} disabled={action.busy}>
        {destination.enabled ? 'Disable' : 'Enable'} this destination
      </button>
      <ErrorMessage error={action.error} />
    </p>
  );
}

function DeliverySection({ destinationName }: { destinationName: string }) {
  const metrics = useApi<DeliveryMetricsResource>(`${destinationName}/metrics`, 5000);
  return (
    <section aria-labelledby="delivery-heading">
      <h2 id="delivery-heading">Delivery, last hour</h2>
      <p className="hint">
        Counted by the router that serves this page, minute by minute; refreshed every 5 s.
      </p>
      <Loaded state={metrics} what="the delivery metrics">
        {(data) => (
          <>
            {data.suspension && (
              <p role="alert" className="error">
                Suspended since {new Date(data.suspension.since).toLocaleString()}: {data.suspension.reason}
              </p>
            )}
            <DeliveryCharts metrics={data} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function DeadLettersSection({ destinationName }: { destinationName: string }) {
  const { client } = useSession();
  const letters = useApi<ListResponses['deadLetters']>(
    `${destinationName}/dead-letters?page_size=100`,
    10_000,
  );
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [open, setOpen] = useState<string>();
  const redrive = async () => {
    const started = await action.run(() =>
      client.post<{ redrive_id: string; state: string }>(`${destinationName}/dead-letters:redrive`),
    );
    if (started) {
      setNotice(`Redrive ${started.redrive_id} started: each dead letter is sent once more.`);
      setTimeout(letters.reload, 1500);
    }
  };
  return (
    <section aria-labelledby="dead-letters-heading">
      <h2 id="dead-letters-heading">Dead letters</h2>
      <Loaded state={letters} what="the dead letters">
        {({ dead_letters: list }) => (
          <>
            {list.length === 0 ? (
              <p data-testid="no-dead-letters">No dead letter: nothing gave up on this destination.</p>
            ) : (
              <ul className="dead-letters">
                {list.map((letter) => (
                  <li key={letter.name} className="card" data-testid="dead-letter">
                    <button
                      type="button"
                      className="link-button"
                      aria-expanded={open === letter.name}
                      onClick={() => setOpen(open === letter.name ? undefined : letter.name)}
                    >
                      {letter.message_id}
                    </button>{' '}
                    <span className="muted">dead-lettered {formatTime(letter.dead_letter_time)}</span>
                    <p>{letter.reason}</p>
                    {open === letter.name && (
                      <>
                        <table className="compact">
                          <caption>Attempts</caption>
                          <thead>
                            <tr>
                              <th scope="col">Time</th>
                              <th scope="col">Outcome</th>
                            </tr>
                          </thead>
                          <tbody>
                            {letter.attempts.map((attempt, index) => (
                              <tr key={index}>
                                <td>{formatTime(attempt.time)}</td>
                                <td>{attempt.outcome}</td>
                              </tr>
                            ))}
                          </tbody>
                        </table>
                        <pre>
                          <code>{JSON.stringify(letter.message, null, 2)}</code>
                        </pre>
                      </>
                    )}
                  </li>
                ))}
              </ul>
            )}
            <button type="button" onClick={redrive} disabled={action.busy || list.length === 0}>
              Redrive dead letters
            </button>
          </>
        )}
      </Loaded>
      <ErrorMessage error={action.error} />
      {notice && (
        <p role="status" className="notice">
          {notice}
        </p>
      )}
    </section>
  );
}

function ReplaysSection({ destinationName }: { destinationName: string }) {
  const { client } = useSession();
  const replays = useApi<ListResponses['replays']>(`${destinationName}/replays?page_size=20`, 3000);
  const action = useAction();
  const [startTime, setStartTime] = useState(() => toLocalInput(new Date(Date.now() - 60 * 60 * 1000)));
  const start = async (event: FormEvent) => {
    event.preventDefault();
    const started = await action.run(() =>
      client.post<ReplayResource>(`${destinationName}/replays`, {
        replay: { start_time: new Date(startTime).toISOString() },
      }),
    );
    if (started) replays.reload();
  };
  return (
    <section aria-labelledby="replays-heading">
      <h2 id="replays-heading">Replays</h2>
      <form onSubmit={start} className="inline-form">
        <label htmlFor="replay-start">Send again every message stored since</label>
        <input
          id="replay-start"
          type="datetime-local"
          value={startTime}
          onChange={(event) => setStartTime(event.target.value)}
        />
        <button type="submit" disabled={action.busy}>
          Start a replay
        </button>
      </form>
      <ErrorMessage error={action.error} />
      <Loaded state={replays} what="the replays">
        {({ replays: list }) =>
          list.length === 0 ? (
            <p>No replay yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Replay</th>
                  <th scope="col">State</th>
                  <th scope="col">Progress</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                {list.map((replay) => (
                  <tr key={replay.name}>
                    <td>{lastSegment(replay.name)}</td>
                    <td>
                      {replay.state}
                      {replay.failure_reason ? `: ${replay.failure_reason}` : ''}
                    </td>
                    <td>
                      {replay.counts
                        ? Object.entries(replay.counts)
                            .filter(([, count]) => count > 0)
                            .map(([outcome, count]) => `${count} ${outcome.replace('_', ' ')}`)
                            .join(', ') || 'nothing yet'
                        : '—'}
                    </td>
                    <td>{formatTime(replay.start_time)}</td>
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

function SettingsSection({ destination, onSaved }: { destination: DestinationResource; onSaved(): void }) {
  const { client } = useSession();
  const slug = destination.catalog_name
    ? lastSegment(destination.catalog_name)
    : lastSegment(destination.name);
  const catalog = useApi<CatalogDestination>(`catalog/destinations/${slug}`);
  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <Loaded state={catalog} what="the catalog entry">
        {(entry) => (
          <>
            {entry.actions && (
              // Not keyed by update_time: after a save the drafts are what was stored, and a remount
              // would drop the "saved" notice before anyone reads it.
              <SubscriptionsSection
                client={client}
                destination={destination}
                actions={entry.actions}
                onSaved={onSaved}
              />
            )}
            <SettingsEditor
              key={destination.update_time}
              client={client}
              destination={destination}
              entry={
                entry.actions
                  ? {
                      ...entry,
                      settings: entry.settings.filter((setting) => setting.name !== SUBSCRIPTIONS_SETTING),
                    }
                  : entry
              }
              onSaved={onSaved}
            />
          </>
        )}
      </Loaded>
    </section>
  );
}

/**
 * The subscriptions of an Actions destination, saved as one config entry: the Config API replaces the
 * whole list and checks each FQL, partner action and mapping, so its refusal is shown as it words it.
 */
function SubscriptionsSection({
  client,
  destination,
  actions,
  onSaved,
}: {
  client: ReturnType<typeof useSession>['client'];
  destination: DestinationResource;
  actions: CatalogDestinationActions;
  onSaved(): void;
}) {
  const stored = destination.config.find(
    (configEntry) => lastSegment(configEntry.name) === SUBSCRIPTIONS_SETTING,
  );
  const [drafts, setDrafts] = useState<SubscriptionDraft[]>(() =>
    draftsOf(stored ? stored.value : actions.presets),
  );
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const done = await action.run(() =>
      client.patch(destination.name, {
        destination: {
          config: [
            {
              name: `${destination.name}/config/${SUBSCRIPTIONS_SETTING}`,
              type: 'mixed',
              value: subscriptionsValue(drafts),
            },
          ],
        },
        update_mask: { paths: ['destination.config'] },
      }),
    );
    if (done) {
      setSaved(true);
      onSaved();
    }
  };
  return (
    <section aria-labelledby="subscriptions-heading">
      <h3 id="subscriptions-heading">Subscriptions</h3>
      <p className="hint">
        Which messages run which action. A message no enabled subscription takes is filtered. Saving replaces
        the whole list.
      </p>
      <form onSubmit={save}>
        <SubscriptionsEditor actions={actions} drafts={drafts} onChange={setDrafts} />
        <ErrorMessage error={action.error} />
        {saved && (
          <p role="status" className="notice">
            Subscriptions saved.
          </p>
        )}
        <div className="actions">
          <button type="submit" disabled={action.busy}>
            Save subscriptions
          </button>
        </div>
      </form>
      {actions.has_test_authentication && <TestConnection client={client} destination={destination} />}
    </section>
  );
}

interface AuthenticationTestResult {
  status: 'OK' | 'FAILED' | 'UNSUPPORTED';
  message?: string;
}

/** Runs the destination's own authentication test with the stored settings and says what it found. */
function TestConnection({
  client,
  destination,
}: {
  client: ReturnType<typeof useSession>['client'];
  destination: DestinationResource;
}) {
  const action = useAction();
  const [result, setResult] = useState<AuthenticationTestResult>();
  const test = async () => {
    setResult(undefined);
    const answer = await action.run(() => client.post<AuthenticationTestResult>(`${destination.name}:test`));
    if (answer) setResult(answer);
  };
  return (
    <div className="test-connection">
      <button type="button" className="secondary" onClick={test} disabled={action.busy}>
        {action.busy ? 'Testing…' : 'Test connection'}
      </button>
      <span className="hint"> Uses the saved settings.</span>
      <ErrorMessage error={action.error && `The connection test could not run. ${action.error}`} />
      {result && (
        <p
          role="status"
          data-testid="connection-test"
          className={result.status === 'OK' ? 'notice' : 'error'}
        >
          {result.status === 'OK'
            ? 'Connection works: the destination accepted the saved settings.'
            : result.status === 'UNSUPPORTED'
              ? 'This destination cannot test its connection.'
              : 'Connection failed.'}
          {result.message ? ` ${result.message}` : ''}
        </p>
      )}
    </div>
  );
}

function SettingsEditor({
  client,
  destination,
  entry,
  onSaved,
}: {
  client: ReturnType<typeof useSession>['client'];
  destination: DestinationResource;
  entry: CatalogDestination;
  onSaved(): void;
}) {
  const current = new Map(
    destination.config.map((configEntry) => [lastSegment(configEntry.name), configEntry.value]),
  );
  const storedSecrets = new Set(
    destination.config
      .filter((configEntry) => configEntry.type === 'password' && configEntry.value !== '')
      .map((configEntry) => lastSegment(configEntry.name)),
  );
  const [values, setValues] = useState<SettingValues>(() =>
    Object.fromEntries(
      entry.settings.map((setting) => [setting.name, initialValue(setting, current.get(setting.name))]),
    ),
  );
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const done = await action.run(() => {
      const config = entry.settings
        // A blank secret keeps the stored one: it is never sent back masked.
        .filter(
          (setting) => !setting.deprecated && !(setting.type === 'password' && values[setting.name] === ''),
        )
        .map((setting) => ({
          name: `${destination.name}/config/${setting.name}`,
          type: setting.type,
          value: settingValue(setting, values[setting.name]),
        }));
      return client.patch(destination.name, {
        destination: { config },
        update_mask: { paths: ['destination.config'] },
      });
    });
    if (done) {
      setSaved(true);
      onSaved();
    }
  };
  return (
    <form className="card" onSubmit={save}>
      <SettingsFields
        settings={entry.settings}
        values={values}
        storedSecrets={storedSecrets}
        onChange={(name, value) => setValues((old) => ({ ...old, [name]: value }))}
      />
      <ErrorMessage error={action.error} />
      {saved && (
        <p role="status" className="notice">
          Saved.
        </p>
      )}
      <button type="submit" disabled={action.busy}>
        Save settings
      </button>
    </form>
  );
}

function DeleteDestination({
  workspace,
  source,
  destination,
}: {
  workspace: string;
  source: string;
  destination: DestinationResource;
}) {
  const { client } = useSession();
  const action = useAction();
  const remove = async () => {
    if (!window.confirm(`Delete ${destination.display_name}? Messages stop going there at once.`)) return;
    const done = await action.run(() => client.delete(destination.name));
    if (done) navigate(`/workspaces/${workspace}/sources/${source}`);
  };
  return (
    <div className="danger-zone">
      <ErrorMessage error={action.error} />
      <button type="button" className="danger" onClick={remove} disabled={action.busy}>
        Delete this destination
      </button>
    </div>
  );
}

function toLocalInput(date: Date): string {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
