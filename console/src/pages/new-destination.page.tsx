import { useMemo, useState, type FormEvent } from 'react';
import type { CatalogDestination, DestinationResource, ListResponses } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, lastSegment } from '../components/common';
import { initialValue, settingValue, type SettingValues } from '../components/setting-values';
import { SettingsFields } from '../components/settings-form';
import { SubscriptionsEditor } from '../components/subscriptions-editor';
import {
  SUBSCRIPTIONS_SETTING,
  coveredMessageTypes,
  draftsOf,
  subscriptionsValue,
  type SubscriptionDraft,
} from '../components/subscriptions';
import { Link, navigate } from '../router';

export function NewDestinationPage({ workspace, source }: { workspace: string; source: string }) {
  const catalog = useApi<ListResponses['catalogDestinations']>('catalog/destinations?page_size=1000');
  const [search, setSearch] = useState('');
  const [chosen, setChosen] = useState<CatalogDestination>();
  return (
    <section>
      <p className="breadcrumbs">
        <Link to={`/workspaces/${workspace}`}>{workspace}</Link> /{' '}
        <Link to={`/workspaces/${workspace}/sources/${source}`}>{source}</Link> / new destination
      </p>
      <h1>Add a destination to {source}</h1>
      <Loaded state={catalog} what="the destination catalog">
        {({ destinations }) =>
          chosen ? (
            <DestinationForm
              workspace={workspace}
              source={source}
              entry={chosen}
              onBack={() => setChosen(undefined)}
            />
          ) : (
            <CatalogPicker
              destinations={destinations}
              search={search}
              onSearch={setSearch}
              onChoose={setChosen}
            />
          )
        }
      </Loaded>
    </section>
  );
}

function CatalogPicker({
  destinations,
  search,
  onSearch,
  onChoose,
}: {
  destinations: CatalogDestination[];
  search: string;
  onSearch(value: string): void;
  onChoose(entry: CatalogDestination): void;
}) {
  const shown = useMemo(() => {
    const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
    return destinations.filter((entry) => {
      const text =
        `${entry.display_name} ${entry.name} ${entry.categories.primary} ${entry.description}`.toLowerCase();
      return words.every((word) => text.includes(word));
    });
  }, [destinations, search]);
  // Hundreds of cards would make the page slow to tab through; the filter narrows them down.
  const limit = 60;
  return (
    <>
      <label htmlFor="catalog-search">Search the catalog ({destinations.length} destinations)</label>
      <input
        id="catalog-search"
        type="search"
        value={search}
        onChange={(event) => onSearch(event.target.value)}
        placeholder="webhook, postgres, amplitude…"
        aria-controls="catalog-results"
      />
      <p className="hint" role="status" aria-live="polite">
        {shown.length === 0
          ? `No destination matches “${search}”.`
          : shown.length > limit
            ? `${shown.length} destinations match; showing the first ${limit}. Type more to narrow them down.`
            : `${shown.length} destination${shown.length === 1 ? '' : 's'} match.`}
      </p>
      <ul className="catalog" id="catalog-results">
        {shown.slice(0, limit).map((entry) => (
          <li key={entry.name}>
            <CatalogCard entry={entry} onChoose={onChoose} />
          </li>
        ))}
      </ul>
    </>
  );
}

/** A card without logo: what the destination is, and what its default subscriptions take. */
function CatalogCard({
  entry,
  onChoose,
}: {
  entry: CatalogDestination;
  onChoose(entry: CatalogDestination): void;
}) {
  const types = entry.actions ? coveredMessageTypes(entry.actions.presets) : [];
  const summary = oneLine(entry.description, entry.display_name);
  return (
    <button
      type="button"
      className="catalog-entry"
      data-testid="catalog-card"
      onClick={() => onChoose(entry)}
    >
      <span className="catalog-entry-title">
        <strong>{entry.display_name}</strong>{' '}
        {entry.actions ? (
          <span className="badge actions">Actions</span>
        ) : (
          <span className="badge">{entry.categories.primary}</span>
        )}
      </span>
      {summary && (
        <span className="catalog-entry-description muted" title={summary}>
          {summary}
        </span>
      )}
      {entry.actions && (
        <span className="catalog-entry-types">
          {types.length > 0 ? (
            <>
              <span className="visually-hidden">Default subscriptions take </span>
              {types.map((type) => (
                <span key={type} className={`badge type-${type}`}>
                  {type}
                </span>
              ))}
            </>
          ) : (
            <span className="muted">no default subscriptions</span>
          )}
        </span>
      )}
    </button>
  );
}

/** The first sentence of a description, for a card; the form shows it whole. */
function oneLine(description: string, displayName: string): string {
  // Generated descriptions start with the name the card shows already ("Actions X: ...").
  const firstLine = description.split('\n')[0].trim().replace(`${displayName}: `, '');
  const sentence = /^(.+?[.!?])(\s|$)/.exec(firstLine);
  return sentence ? sentence[1] : firstLine;
}

function DestinationForm({
  workspace,
  source,
  entry,
  onBack,
}: {
  workspace: string;
  source: string;
  entry: CatalogDestination;
  onBack(): void;
}) {
  const { client } = useSession();
  const [values, setValues] = useState<SettingValues>(() =>
    Object.fromEntries(entry.settings.map((setting) => [setting.name, initialValue(setting, undefined)])),
  );
  // An Actions entry starts from its presets, edited in the subscriptions editor, not as raw JSON.
  const [subscriptions, setSubscriptions] = useState<SubscriptionDraft[]>(() =>
    draftsOf(entry.actions?.presets),
  );
  const settings = entry.actions
    ? entry.settings.filter((setting) => setting.name !== SUBSCRIPTIONS_SETTING)
    : entry.settings;
  const [enabled, setEnabled] = useState(true);
  const action = useAction();
  const slug = lastSegment(entry.name);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const destinationName = `workspaces/${workspace}/sources/${source}/destinations/${slug}`;
    const created = await action.run(async () => {
      const config = settings
        .filter((setting) => !setting.deprecated)
        .filter((setting) => values[setting.name] !== '' || setting.required)
        .map((setting) => ({
          name: `${destinationName}/config/${setting.name}`,
          type: setting.type,
          value: settingValue(setting, values[setting.name]),
        }));
      if (entry.actions)
        config.push({
          name: `${destinationName}/config/${SUBSCRIPTIONS_SETTING}`,
          type: 'mixed',
          value: subscriptionsValue(subscriptions),
        });
      return client.post<DestinationResource>(`workspaces/${workspace}/sources/${source}/destinations`, {
        destination: { name: destinationName, connection_mode: 'CLOUD', enabled, config },
      });
    });
    if (created) navigate(`/workspaces/${workspace}/sources/${source}/destinations/${slug}`);
  };
  return (
    <form className="card" onSubmit={submit}>
      <h2>{entry.display_name}</h2>
      <p className="muted">{entry.description}</p>
      <SettingsFields
        settings={settings}
        values={values}
        onChange={(name, value) => setValues((old) => ({ ...old, [name]: value }))}
      />
      {entry.actions && (
        <fieldset className="subscriptions-fieldset">
          <legend>Subscriptions</legend>
          <p className="hint">
            Which messages run which action. These are the destination&apos;s defaults; change them now or
            later on the destination&apos;s page.
          </p>
          <SubscriptionsEditor actions={entry.actions} drafts={subscriptions} onChange={setSubscriptions} />
        </fieldset>
      )}
      <div className="checkbox">
        <input
          id="destination-enabled"
          type="checkbox"
          checked={enabled}
          onChange={(event) => setEnabled(event.target.checked)}
        />
        <label htmlFor="destination-enabled">Enabled (deliver messages from now on)</label>
      </div>
      <ErrorMessage error={action.error} />
      <div className="actions">
        <button type="submit" disabled={action.busy}>
          Create destination
        </button>
        <button type="button" className="secondary" onClick={onBack}>
          Choose another
        </button>
      </div>
    </form>
  );
}
