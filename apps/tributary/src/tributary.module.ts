import { DynamicModule, Module } from '@nestjs/common';
import { Environment } from '@tributary/platform';
import { ConfigApiModule } from '../../config-api/src/config-api.module';

/** Every Tributary surface in one process on one port: the embedded default behind `npm start`. */
@Module({})
export class TributaryModule {
  static register(environment: Environment): DynamicModule {
    return { module: TributaryModule, imports: [ConfigApiModule.register(environment)] };
  }
}
