import { workspaceName } from '@tributary/contracts';
import { WorkspaceRecord } from '@tributary/config-domain';
import { withMilliseconds } from '../shared/timestamps';

export function presentWorkspace(workspace: WorkspaceRecord) {
  return {
    name: workspaceName(workspace.slug),
    display_name: workspace.displayName,
    id: workspace.id,
    region: workspace.region,
    oauth_required: workspace.oauthRequired ?? false,
    create_time: withMilliseconds(workspace.createTime),
  };
}
