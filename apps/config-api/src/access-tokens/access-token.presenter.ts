import { workspaceName } from '@tributary/contracts';
import { AccessTokenRecord } from '@tributary/config-domain';
import { withSeconds } from '../shared/timestamps';

export function presentAccessToken(token: AccessTokenRecord, plaintext?: string) {
  return {
    name: `access-tokens/${token.number}`,
    description: token.description,
    scopes: token.scope,
    workspace_names: token.workspaceSlugs.map(workspaceName),
    create_time: withSeconds(token.createTime),
    ...(token.expireTime === undefined ? {} : { expire_time: withSeconds(token.expireTime) }),
    ...(plaintext === undefined ? {} : { token: plaintext }),
  };
}
