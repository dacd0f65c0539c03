import { ConfigApiController, ConfigApiError } from '@tributary/config-api-access';
import { All } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';

/**
 * Surfaces of v1beta that Tributary does not offer (docs/config-api.md §2.9: functions, IAM,
 * OAuth apps of the legacy kind; §2.8 time series of delivery metrics, whose shapes no source
 * shows). They answer 501, code 12, so a client learns "not implemented" rather than "no such path".
 */
@ApiExcludeController()
@ConfigApiController('v1beta')
export class UnimplementedController {
  @All([
    'workspaces/:workspace/functions',
    'workspaces/:workspace/functions/*',
    'workspaces/:workspace/roles',
    'workspaces/:workspace/roles/*',
    'workspaces/:workspace/invites',
    'workspaces/:workspace/invites/*',
    'workspaces/:workspace/apps',
    'workspaces/:workspace/apps/*',
    'workspaces/:workspace/event-delivery-metrics/@batchGetSummary',
    'workspaces/:workspace/sources/:source/destinations/:destination/metrics/@batchGet',
    'workspaces/:workspace/sources/:source/connected-warehouses',
    'installs/*',
  ])
  unimplemented(): never {
    throw ConfigApiError.unimplemented('not implemented by Tributary');
  }
}
