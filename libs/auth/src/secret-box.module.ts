import { DynamicModule, Module } from '@nestjs/common';
import { loadDeploymentKey, SecretBox } from './secret-box';

/** The deployment's secret box, shared by every app of a process (Config API writes, router reads). */
@Module({})
export class SecretBoxModule {
  static register(options: { secretKeyHex?: string; keyFile: string }): DynamicModule {
    return {
      module: SecretBoxModule,
      global: true,
      providers: [{ provide: SecretBox, useFactory: () => new SecretBox(loadDeploymentKey(options)) }],
      exports: [SecretBox],
    };
  }
}
