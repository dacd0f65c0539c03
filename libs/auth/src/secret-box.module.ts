import { DynamicModule, Logger, Module } from '@nestjs/common';
import { DeploymentKeyOptions, loadSecretBox, SecretBox } from './secret-box';

/** The deployment's secret box, shared by every app of a process (Config API writes, router reads). */
@Module({})
export class SecretBoxModule {
  static register(options: DeploymentKeyOptions): DynamicModule {
    return {
      module: SecretBoxModule,
      global: true,
      providers: [
        {
          provide: SecretBox,
          useFactory: () => {
            const box = loadSecretBox(options);
            const { current, previous } = box.keyIds;
            // Ids only (an HMAC of each key): enough to check every replica holds the same keys.
            new Logger('SecretBox').log(
              `encrypting with key id ${current}` +
                (previous.length > 0 ? `; also decrypting with ${previous.join(', ')}` : ''),
            );
            return box;
          },
        },
      ],
      exports: [SecretBox],
    };
  }
}
