import { useEffect, useState, type FormEvent } from 'react';
import { useAction, useApi, useSession } from '../api/use-api';
import { ErrorMessage, Loaded, formatTime } from '../components/common';
import {
  SETTING_TYPES,
  kindLabel,
  prettyJson,
  previewSettingValue,
  sampleEvent,
  type FunctionKind,
  type FunctionSettingDeclaration,
  type FunctionSettingType,
} from '../components/function-samples';
import { Link } from '../router';
import type { FunctionResource } from './functions.page';

/** What `POST .../functions/preview` answers. */
interface PreviewAnswer {
  invoke: { success: boolean; output: string; error_reason: string | null };
  logs: Array<{ message: string; created_at: string }>;
  logs_truncated: boolean;
  session_id: string;
}

interface Draft {
  displayName: string;
  code: string;
  settings: FunctionSettingDeclaration[];
}

function draftOf(fn: FunctionResource): Draft {
  return { displayName: fn.display_name, code: fn.code, settings: fn.settings ?? [] };
}

function sameDraft(a: Draft, b: Draft): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * One function's editor: its code, name and settings declarations, saved as a new version (PATCH);
 * Deploy makes instances run the latest version; "Run on a sample event" runs the code being edited
 * (saved or not) once through the preview route and shows what it returned or emitted, why it
 * failed, and what it logged.
 */
export function FunctionEditorPage({ workspace, functionId }: { workspace: string; functionId: string }) {
  const path = `workspaces/${workspace}/functions/${functionId}`;
  const loaded = useApi<FunctionResource>(path);
  return (
    <section>
      <p className="breadcrumbs">
        <Link to={`/workspaces/${workspace}/functions`}>functions</Link>
      </p>
      <Loaded state={loaded} what="the function">
        {(fn) => <FunctionEditor workspace={workspace} fn={fn} onSaved={loaded.reload} />}
      </Loaded>
    </section>
  );
}

function FunctionEditor({
  workspace,
  fn,
  onSaved,
}: {
  workspace: string;
  fn: FunctionResource;
  onSaved(): void;
}) {
  const { client } = useSession();
  const path = `workspaces/${workspace}/functions/${fn.id}`;
  const [draft, setDraft] = useState<Draft>(() => draftOf(fn));
  const [notice, setNotice] = useState<string>();
  const save = useAction();
  const deploy = useAction();
  const unsaved = !sameDraft(draft, draftOf(fn));

  // A reload after a save or a deploy shows what the server keeps.
  useEffect(() => setDraft(draftOf(fn)), [fn]);

  const onSave = async (event: FormEvent) => {
    event.preventDefault();
    const saved = await save.run(() =>
      client.patch<FunctionResource>(path, {
        function: { display_name: draft.displayName, code: draft.code, settings: draft.settings },
        update_mask: { paths: ['function.display_name', 'function.code', 'function.settings'] },
      }),
    );
    if (saved) {
      setNotice(`Saved version ${saved.version}. Deploy it to make instances run it.`);
      onSaved();
    }
  };
  const onDeploy = async () => {
    const deployed = await deploy.run(() => client.post<{ deployed_version: number }>(`${path}/deploy`, {}));
    if (deployed) {
      setNotice(`Deployed version ${deployed.deployed_version}: instances run it from now on.`);
      onSaved();
    }
  };

  const setSetting = (index: number, change: Partial<FunctionSettingDeclaration>) =>
    setDraft((previous) => ({
      ...previous,
      settings: previous.settings.map((setting, at) => (at === index ? { ...setting, ...change } : setting)),
    }));

  return (
    <>
      <h1>{fn.display_name}</h1>
      <p className="muted">
        {kindLabel(fn.type)} · <code>{fn.id}</code> · updated {formatTime(fn.update_time)}
      </p>
      <dl className="facts" aria-label="Versions">
        <dt>Latest version</dt>
        <dd data-testid="latest-version">{fn.version}</dd>
        <dt>Deployed version</dt>
        <dd data-testid="deployed-version">
          {fn.deployed_version}{' '}
          {fn.deployed_version === fn.version ? (
            <span className="badge ok">up to date</span>
          ) : (
            <span className="badge outcome-retried">version {fn.version} is not deployed</span>
          )}
        </dd>
      </dl>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={onSave}>
        <ErrorMessage error={save.error} />
        <label htmlFor="function-display-name">Name</label>
        <input
          id="function-display-name"
          value={draft.displayName}
          onChange={(event) => setDraft({ ...draft, displayName: event.target.value })}
          required
          autoComplete="off"
        />
        <label htmlFor="function-code">Code</label>
        <textarea
          id="function-code"
          className="code"
          rows={18}
          spellCheck={false}
          value={draft.code}
          onChange={(event) => setDraft({ ...draft, code: event.target.value })}
        />
        <fieldset className="subscriptions-fieldset">
          <legend>Settings the function declares</legend>
          <p className="hint">
            Each instance of the function gives these values; the code reads them from its{' '}
            <code>settings</code> argument. Sensitive ones are stored encrypted and never shown again.
          </p>
          {draft.settings.length === 0 ? (
            <p className="muted">No setting.</p>
          ) : (
            <table className="compact">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Label</th>
                  <th scope="col">Type</th>
                  <th scope="col">Description</th>
                  <th scope="col">Required</th>
                  <th scope="col">Sensitive</th>
                  <th scope="col">
                    <span className="visually-hidden">Remove</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {draft.settings.map((setting, index) => (
                  <tr key={index}>
                    <td>
                      <input
                        aria-label={`Setting ${index + 1} name`}
                        className="code"
                        value={setting.name}
                        onChange={(event) => setSetting(index, { name: event.target.value })}
                        required
                      />
                    </td>
                    <td>
                      <input
                        aria-label={`Setting ${index + 1} label`}
                        value={setting.label}
                        onChange={(event) => setSetting(index, { label: event.target.value })}
                      />
                    </td>
                    <td>
                      <select
                        aria-label={`Setting ${index + 1} type`}
                        value={setting.type}
                        onChange={(event) =>
                          setSetting(index, { type: event.target.value as FunctionSettingType })
                        }
                      >
                        {SETTING_TYPES.map((type) => (
                          <option key={type} value={type}>
                            {type}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>
                      <input
                        aria-label={`Setting ${index + 1} description`}
                        value={setting.description}
                        onChange={(event) => setSetting(index, { description: event.target.value })}
                      />
                    </td>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Setting ${index + 1} required`}
                        checked={setting.required}
                        onChange={(event) => setSetting(index, { required: event.target.checked })}
                      />
                    </td>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Setting ${index + 1} sensitive`}
                        checked={setting.sensitive}
                        disabled={setting.type !== 'string'}
                        onChange={(event) => setSetting(index, { sensitive: event.target.checked })}
                      />
                    </td>
                    <td>
                      <button
                        type="button"
                        className="secondary"
                        aria-label={`Remove setting ${setting.name || index + 1}`}
                        onClick={() =>
                          setDraft({ ...draft, settings: draft.settings.filter((_, at) => at !== index) })
                        }
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <button
            type="button"
            className="secondary"
            onClick={() =>
              setDraft({
                ...draft,
                settings: [
                  ...draft.settings,
                  { name: '', label: '', type: 'string', description: '', required: false, sensitive: false },
                ],
              })
            }
          >
            Add a setting
          </button>
        </fieldset>
        <div className="actions">
          <button type="submit" disabled={save.busy || !unsaved}>
            Save
          </button>
          <button
            type="button"
            className="secondary"
            disabled={deploy.busy || unsaved || fn.deployed_version === fn.version}
            title={unsaved ? 'Save first: Deploy deploys the saved latest version' : undefined}
            onClick={onDeploy}
          >
            Deploy version {fn.version}
          </button>
          {unsaved && <span className="muted">Unsaved changes</span>}
        </div>
        <ErrorMessage error={deploy.error} />
      </form>
      <PreviewPanel workspace={workspace} kind={fn.type} draft={draft} />
    </>
  );
}

/** Runs the code being edited once on a sample, through the preview route; nothing is delivered. */
function PreviewPanel({ workspace, kind, draft }: { workspace: string; kind: FunctionKind; draft: Draft }) {
  const { client } = useSession();
  const [sample, setSample] = useState(() => sampleEvent(kind));
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [answer, setAnswer] = useState<PreviewAnswer>();
  const run = useAction();

  const onRun = async () => {
    setAnswer(undefined);
    const result = await run.run(async () => {
      const settings = Object.fromEntries(
        draft.settings
          .filter((setting) => setting.name !== '')
          .map((setting) => [setting.name, previewSettingValue(setting, values[setting.name])]),
      );
      return client.post<PreviewAnswer>(`workspaces/${workspace}/functions/preview?type=${kind}`, {
        function: { code: draft.code, buildpack: 'boreal', settings: draft.settings },
        payload: sample,
        settings,
      });
    });
    if (result) setAnswer(result);
  };

  return (
    <section className="card" aria-labelledby="preview-heading">
      <h2 id="preview-heading">Run on a sample event</h2>
      <p className="hint">
        {kind === 'SOURCE'
          ? 'The sample is the body of a POST to the webhook; the output is the messages the function emits.'
          : 'The sample is one message; its type picks the handler. The output is what the handler returns.'}{' '}
        Runs the code above as it is now, saved or not; nothing is stored or delivered.
      </p>
      <label htmlFor="preview-sample">Sample {kind === 'SOURCE' ? 'request body' : 'event'} (JSON)</label>
      <textarea
        id="preview-sample"
        className="code"
        rows={10}
        spellCheck={false}
        value={sample}
        onChange={(event) => setSample(event.target.value)}
      />
      {draft.settings.filter((setting) => setting.name !== '').length > 0 && (
        <fieldset className="subscriptions-fieldset">
          <legend>Setting values for this run</legend>
          {draft.settings
            .filter((setting) => setting.name !== '')
            .map((setting) => {
              const id = `preview-setting-${setting.name}`;
              const label = setting.label || setting.name;
              if (setting.type === 'boolean') {
                return (
                  <div key={setting.name} className="checkbox">
                    <input
                      id={id}
                      type="checkbox"
                      checked={values[setting.name] === true}
                      onChange={(event) => setValues({ ...values, [setting.name]: event.target.checked })}
                    />
                    <label htmlFor={id}>{label}</label>
                  </div>
                );
              }
              return (
                <div key={setting.name} className="field">
                  <label htmlFor={id}>
                    {label}
                    {setting.type === 'array' && ' (one item per line)'}
                    {setting.type === 'text-map' && ' (a JSON object)'}
                  </label>
                  {setting.type === 'string' ? (
                    <input
                      id={id}
                      type={setting.sensitive ? 'password' : 'text'}
                      autoComplete="off"
                      value={String(values[setting.name] ?? '')}
                      onChange={(event) => setValues({ ...values, [setting.name]: event.target.value })}
                    />
                  ) : (
                    <textarea
                      id={id}
                      className="code"
                      rows={3}
                      value={String(values[setting.name] ?? '')}
                      onChange={(event) => setValues({ ...values, [setting.name]: event.target.value })}
                    />
                  )}
                </div>
              );
            })}
        </fieldset>
      )}
      <div className="actions">
        <button type="button" onClick={onRun} disabled={run.busy}>
          {run.busy ? 'Running…' : 'Run on a sample event'}
        </button>
      </div>
      <ErrorMessage error={run.error} />
      {answer && (
        <div className="preview-result" aria-live="polite">
          {answer.invoke.success ? (
            <p>
              <span className="badge ok">Succeeded</span>{' '}
              {kind === 'SOURCE' ? 'The function emitted:' : 'The function returned:'}
            </p>
          ) : (
            <p>
              <span className="badge outcome-discarded">Failed</span>{' '}
              <span data-testid="preview-error">{answer.invoke.error_reason}</span>
            </p>
          )}
          {answer.invoke.success && (
            <>
              <h3>Output</h3>
              <pre data-testid="preview-output">{prettyJson(answer.invoke.output)}</pre>
            </>
          )}
          <h3>Logs</h3>
          {answer.logs.length === 0 ? (
            <p className="muted">Nothing logged.</p>
          ) : (
            <pre data-testid="preview-logs">
              {answer.logs.map((line) => line.message).join('\n')}
              {answer.logs_truncated && '\n(more lines were dropped)'}
            </pre>
          )}
        </div>
      )}
    </section>
  );
}
