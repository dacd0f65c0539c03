import type { CatalogDestinationSetting } from '@tributary/contracts';
import type { SettingValues } from './setting-values';

/**
 * One field per catalog setting, in catalog order, by type: secrets are password inputs whose stored
 * value is never shown (left blank, it stays unchanged), selects list their options, booleans are
 * checkboxes, lists and maps take JSON.
 */
export function SettingsFields({
  settings,
  values,
  onChange,
  storedSecrets,
}: {
  settings: CatalogDestinationSetting[];
  values: SettingValues;
  onChange(name: string, value: string | boolean): void;
  /** Secrets that already have a stored value (shown as "stored; leave blank to keep"). */
  storedSecrets?: Set<string>;
}) {
  const visible = settings.filter((setting) => !setting.deprecated);
  if (visible.length === 0) return <p className="muted">This destination has no settings.</p>;
  return (
    <>
      {visible.map((setting) => {
        const id = `setting-${setting.name}`;
        const label = `${setting.display_name}${setting.required ? ' (required)' : ''}`;
        const value = values[setting.name];
        if (setting.type === 'boolean') {
          return (
            <div key={setting.name} className="checkbox">
              <input
                id={id}
                type="checkbox"
                checked={value === true}
                onChange={(event) => onChange(setting.name, event.target.checked)}
              />
              <label htmlFor={id}>{label}</label>
            </div>
          );
        }
        const options = setting.map_validators.select_options;
        return (
          <div key={setting.name} className="field">
            <label htmlFor={id}>{label}</label>
            {setting.type === 'select' && options.length > 0 ? (
              <select
                id={id}
                value={String(value ?? '')}
                onChange={(event) => onChange(setting.name, event.target.value)}
              >
                <option value="">(none)</option>
                {options.map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            ) : setting.type === 'list' || setting.type === 'map' || setting.type === 'mixed' ? (
              <textarea
                id={id}
                rows={3}
                value={String(value ?? '')}
                onChange={(event) => onChange(setting.name, event.target.value)}
              />
            ) : (
              <input
                id={id}
                type={
                  setting.type === 'password' ? 'password' : setting.type === 'number' ? 'number' : 'text'
                }
                autoComplete="off"
                required={
                  setting.required && !(setting.type === 'password' && storedSecrets?.has(setting.name))
                }
                placeholder={
                  setting.type === 'password' && storedSecrets?.has(setting.name)
                    ? 'stored (hidden); leave blank to keep'
                    : undefined
                }
                value={String(value ?? '')}
                onChange={(event) => onChange(setting.name, event.target.value)}
              />
            )}
            <span className="hint">
              {setting.name} · {setting.type}
              {setting.string_validators.regexp ? ' · checked by the server' : ''}
            </span>
          </div>
        );
      })}
    </>
  );
}
