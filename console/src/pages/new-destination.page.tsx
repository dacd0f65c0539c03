import { useMemo, useState, type FormEvent } from 'react';
import type { CatalogDestination, DestinationResource, ListResponses } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, lastSegment } from '../components/common';
import { initialValue, settingValue, type SettingValues } from '../components/setting-values';
import { SettingsFields } from '../components/settings-form';
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
    const needle = search.trim().toLowerCase();
    return destinations
      .filter(
        (entry) =>
          !needle ||
          `${entry.display_name} ${entry.name} ${entry.categories.primary}`.toLowerCase().includes(needle),
      )
      .slice(0, 60);
  }, [destinations, search]);
  return (
    <>
      <label htmlFor="catalog-search">Search the catalog ({destinations.length} destinations)</label>
      <input
        id="catalog-search"
        type="search"
        value={search}
        onChange={(event) => onSearch(event.target.value)}
        placeholder="webhook, postgres, amplitude…"
      />
      <ul className="catalog">
        {shown.map((entry) => (
          <li key={entry.name}>
            <button type="button" className="catalog-entry" onClick={() => onChoose(entry)}>
              <strong>{entry.display_name}</strong>
              <span className="muted">{entry.categories.primary}</span>
            </button>
          </li>
        ))}
      </ul>
      {shown.length === 0 && <p>No destination matches “{search}”.</p>}
    </>
  );
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
  const [enabled, setEnabled] = useState(true);
  const action = useAction();
  const slug = lastSegment(entry.name);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const destinationName = `workspaces/${workspace}/sources/${source}/destinations/${slug}`;
    const created = await action.run(async () => {
      const config = entry.settings
        .filter((setting) => !setting.deprecated)
        .filter((setting) => values[setting.name] !== '' || setting.required)
        .map((setting) => ({
          name: `${destinationName}/config/${setting.name}`,
          type: setting.type,
          value: settingValue(setting, values[setting.name]),
        }));
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
        settings={entry.settings}
        values={values}
        onChange={(name, value) => setValues((old) => ({ ...old, [name]: value }))}
      />
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
