import { useState, type FormEvent } from 'react';
import type { FilterPreviewResponse, FilterResource, ListResponses } from '@tributary/contracts';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded } from './common';

const SAMPLE_EVENT = JSON.stringify(
  {
    type: 'track',
    event: 'Order Completed',
    userId: 'user-1',
    properties: { total: 42.5, email: 'someone@example.com' },
    context: { ip: '203.0.113.7' },
  },
  null,
  2,
);

type ActionKind = 'drop_event' | 'sample_event' | 'blocklist_fields' | 'whitelist_fields';

function buildActions(kind: ActionKind, fields: string, percent: string) {
  if (kind === 'drop_event') return [{ type: 'drop_event' }];
  if (kind === 'sample_event')
    return [{ type: 'sample_event', percent: Number(percent) / 100, path: 'userId' }];
  const byObject: Record<string, { fields: string[] }> = {};
  for (const path of fields
    .split(',')
    .map((field) => field.trim())
    .filter(Boolean)) {
    const [object, ...rest] = path.split('.');
    if (!rest.length) continue;
    (byObject[object] ??= { fields: [] }).fields.push(rest.join('.'));
  }
  return [{ type: kind, fields: byObject }];
}

/** A destination's filters: list, enable/disable, delete, and a new one with a preview on a sample event. */
export function FiltersSection({ destinationName }: { destinationName: string }) {
  const { client } = useSession();
  const filters = useApi<ListResponses['filters']>(`${destinationName}/filters`);
  const action = useAction();
  const [title, setTitle] = useState('');
  const [condition, setCondition] = useState("type = 'track' and event = 'Order Completed'");
  const [kind, setKind] = useState<ActionKind>('blocklist_fields');
  const [fields, setFields] = useState('properties.email, context.ip');
  const [percent, setPercent] = useState('50');
  const [sample, setSample] = useState(SAMPLE_EVENT);
  const [preview, setPreview] = useState<FilterPreviewResponse>();
  const previewAction = useAction();

  const filterBody = () => ({
    if: condition,
    actions: buildActions(kind, fields, percent),
    title: title || condition,
    enabled: true,
  });

  const runPreview = async () => {
    setPreview(undefined);
    const answer = await previewAction.run(() =>
      client.post<FilterPreviewResponse>('filters/preview', { filter: filterBody(), input: sample }),
    );
    if (answer) setPreview(answer);
  };
  const create = async (event: FormEvent) => {
    event.preventDefault();
    const created = await action.run(() =>
      client.post<FilterResource>(`${destinationName}/filters`, { filter: filterBody() }),
    );
    if (created) {
      setTitle('');
      filters.reload();
    }
  };
  const toggle = async (filter: FilterResource) => {
    await action.run(() =>
      client.patch(filter.name, {
        filter: { enabled: !filter.enabled },
        update_mask: { paths: ['enabled'] },
      }),
    );
    filters.reload();
  };
  const remove = async (filter: FilterResource) => {
    if (!window.confirm(`Delete the filter “${filter.title}”?`)) return;
    await action.run(() => client.delete(filter.name));
    filters.reload();
  };

  return (
    <section aria-labelledby="filters-heading">
      <h2 id="filters-heading">Filters</h2>
      <ErrorMessage error={action.error} />
      <Loaded state={filters} what="the filters">
        {({ filters: list }) =>
          list.length === 0 ? (
            <p>No filter: every message the destination accepts is sent whole.</p>
          ) : (
            <ul className="filters">
              {list.map((filter) => (
                <li key={filter.name} className="card">
                  <strong>{filter.title}</strong>{' '}
                  <span className={filter.enabled ? 'badge ok' : 'badge'}>
                    {filter.enabled ? 'on' : 'off'}
                  </span>
                  <pre>
                    <code>if {filter.if}</code>
                  </pre>
                  <p className="muted">
                    {filter.actions.map((filterAction) => filterAction.type).join(', ')}
                  </p>
                  <button type="button" onClick={() => toggle(filter)}>
                    {filter.enabled ? 'Turn off' : 'Turn on'}
                  </button>{' '}
                  <button type="button" className="danger" onClick={() => remove(filter)}>
                    Delete
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <form className="card" onSubmit={create}>
        <h3>New filter</h3>
        <label htmlFor="filter-title">Title</label>
        <input id="filter-title" value={title} onChange={(event) => setTitle(event.target.value)} />
        <label htmlFor="filter-if">If (FQL)</label>
        <input
          id="filter-if"
          value={condition}
          onChange={(event) => setCondition(event.target.value)}
          spellCheck={false}
        />
        <label htmlFor="filter-action">Then</label>
        <select
          id="filter-action"
          value={kind}
          onChange={(event) => setKind(event.target.value as ActionKind)}
        >
          <option value="drop_event">drop the event</option>
          <option value="sample_event">keep only a sample</option>
          <option value="blocklist_fields">remove these fields</option>
          <option value="whitelist_fields">keep only these fields</option>
        </select>
        {kind === 'sample_event' ? (
          <>
            <label htmlFor="filter-percent">Percent kept</label>
            <input
              id="filter-percent"
              type="number"
              min="0"
              max="100"
              value={percent}
              onChange={(event) => setPercent(event.target.value)}
            />
          </>
        ) : kind !== 'drop_event' ? (
          <>
            <label htmlFor="filter-fields">Fields (comma-separated: properties.x, context.y, traits.z)</label>
            <input id="filter-fields" value={fields} onChange={(event) => setFields(event.target.value)} />
          </>
        ) : null}
        <label htmlFor="filter-sample">Sample event (JSON)</label>
        <textarea
          id="filter-sample"
          rows={8}
          value={sample}
          onChange={(event) => setSample(event.target.value)}
          spellCheck={false}
        />
        <div className="actions">
          <button type="button" className="secondary" onClick={runPreview} disabled={previewAction.busy}>
            Preview on the sample
          </button>
          <button type="submit" disabled={action.busy}>
            Create filter
          </button>
        </div>
        <ErrorMessage error={previewAction.error} />
        {preview && (
          <div className="preview" role="status" data-testid="filter-preview">
            {preview.result === 'pass' ? (
              <>
                <p>
                  <strong>Sent</strong> to the destination as:
                </p>
                <pre>
                  <code>{JSON.stringify(JSON.parse(preview.output ?? '{}'), null, 2)}</code>
                </pre>
              </>
            ) : (
              <p>
                <strong>Not sent</strong> ({preview.result.replace('_', ' ')}).
              </p>
            )}
          </div>
        )}
      </form>
    </section>
  );
}
