import { useState } from 'react';
import type { CatalogDestinationActions } from '@tributary/contracts';
import { draftLabel, messageTypesOf, type SubscriptionDraft } from './subscriptions';

/**
 * The subscriptions of an Actions destination: which messages (FQL) run which partner action with
 * which mapping. Edits stay here until the page saves the whole list (the setting is replaced whole).
 */
export function SubscriptionsEditor({
  actions,
  drafts,
  onChange,
}: {
  actions: CatalogDestinationActions;
  drafts: SubscriptionDraft[];
  onChange(drafts: SubscriptionDraft[]): void;
}) {
  const [editing, setEditing] = useState<number>();
  const titles = new Map(actions.partner_actions.map((action) => [action.name, action.display_name]));
  const update = (index: number, change: Partial<SubscriptionDraft>) =>
    onChange(drafts.map((draft, at) => (at === index ? { ...draft, ...change } : draft)));
  const add = () => {
    const first = actions.partner_actions[0]?.name ?? '';
    onChange([
      ...drafts,
      { name: '', subscribe: 'type = "track"', partnerAction: first, mappingText: '{}', enabled: true },
    ]);
    setEditing(drafts.length);
  };
  const remove = (index: number) => {
    onChange(drafts.filter((_, at) => at !== index));
    setEditing(undefined);
  };
  return (
    <div className="subscriptions">
      {drafts.length === 0 ? (
        <p data-testid="no-subscriptions">
          No subscription: every message is filtered until one is added.
          {actions.presets.length === 0 && ' This destination has no default subscriptions.'}
        </p>
      ) : (
        <ol className="subscription-list">
          {drafts.map((draft, index) => {
            const label = draftLabel(draft, index);
            const types = messageTypesOf(draft.subscribe);
            return (
              <li key={index} className="card subscription" data-testid="subscription">
                <div className="subscription-summary">
                  <strong>{draft.name.trim() || `Subscription ${index + 1}`}</strong>{' '}
                  <span className={draft.enabled ? 'badge ok' : 'badge'}>
                    {draft.enabled ? 'enabled' : 'disabled'}
                  </span>
                  <dl>
                    <dt>When</dt>
                    <dd>
                      <code>{draft.subscribe || '(empty)'}</code>
                      {types.length > 0 && <span className="muted"> · {types.join(', ')}</span>}
                    </dd>
                    <dt>Then</dt>
                    <dd>
                      {titles.get(draft.partnerAction) ?? draft.partnerAction}{' '}
                      <span className="muted">({draft.partnerAction})</span>
                    </dd>
                  </dl>
                  <div className="actions">
                    <button
                      type="button"
                      className="secondary"
                      aria-expanded={editing === index}
                      aria-label={`Edit subscription ${label}`}
                      onClick={() => setEditing(editing === index ? undefined : index)}
                    >
                      {editing === index ? 'Close' : 'Edit'}
                    </button>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Remove subscription ${label}`}
                      onClick={() => remove(index)}
                    >
                      Remove
                    </button>
                  </div>
                </div>
                {editing === index && (
                  <SubscriptionFields
                    id={`subscription-${index}`}
                    draft={draft}
                    actions={actions}
                    onChange={(change) => update(index, change)}
                  />
                )}
              </li>
            );
          })}
        </ol>
      )}
      <button type="button" className="secondary" onClick={add}>
        Add a subscription
      </button>
    </div>
  );
}

function SubscriptionFields({
  id,
  draft,
  actions,
  onChange,
}: {
  id: string;
  draft: SubscriptionDraft;
  actions: CatalogDestinationActions;
  onChange(change: Partial<SubscriptionDraft>): void;
}) {
  const known = actions.partner_actions.some((action) => action.name === draft.partnerAction);
  return (
    <fieldset className="subscription-fields">
      <legend className="visually-hidden">Edit this subscription</legend>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          value={draft.name}
          onChange={(event) => onChange({ name: event.target.value })}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-subscribe`}>Messages it takes (FQL)</label>
        <input
          id={`${id}-subscribe`}
          className="code"
          spellCheck={false}
          value={draft.subscribe}
          onChange={(event) => onChange({ subscribe: event.target.value })}
        />
        <span className="hint">
          e.g. <code>type = &quot;track&quot; and event = &quot;Order Completed&quot;</code>; checked by the
          server when saved.
        </span>
      </div>
      <div className="field">
        <label htmlFor={`${id}-action`}>Partner action</label>
        <select
          id={`${id}-action`}
          value={draft.partnerAction}
          onChange={(event) => onChange({ partnerAction: event.target.value })}
        >
          {!known && <option value={draft.partnerAction}>{draft.partnerAction || '(choose one)'}</option>}
          {actions.partner_actions.map((action) => (
            <option key={action.name} value={action.name}>
              {action.display_name} ({action.name}){action.batch ? ', batches' : ''}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-mapping`}>Mapping (JSON)</label>
        <textarea
          id={`${id}-mapping`}
          className="code"
          rows={Math.min(14, Math.max(4, draft.mappingText.split('\n').length))}
          spellCheck={false}
          value={draft.mappingText}
          onChange={(event) => onChange({ mappingText: event.target.value })}
        />
        <span className="hint">
          {'{"field": value}'}: a literal, or a directive such as {'{"@path": "$.properties.total"}'}.
          Required fields left out get the action&apos;s defaults.
        </span>
      </div>
      <div className="checkbox">
        <input
          id={`${id}-enabled`}
          type="checkbox"
          checked={draft.enabled}
          onChange={(event) => onChange({ enabled: event.target.checked })}
        />
        <label htmlFor={`${id}-enabled`}>Enabled</label>
      </div>
    </fieldset>
  );
}
