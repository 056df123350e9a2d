// ApiVersions (key 18), v0-4, flexible from v3. A client's first request: which
// APIs and versions this broker serves. Quirks the listener honours: the
// response header is always v0, and a request of an unknown version is
// answered as v0 with UNSUPPORTED_VERSION and the full API list, so the client
// can retry with a version both sides know.
//
//   request  v3+: clientSoftwareName string, clientSoftwareVersion string
//   response errorCode int16, apiKeys [apiKey int16, minVersion int16, maxVersion int16],
//            v1+: throttleTimeMs int32,
//            v3+ tagged: 0 supportedFeatures [name, minVersion, maxVersion], 1 finalizedFeaturesEpoch int64,
//                        2 finalizedFeatures [name, maxVersionLevel, minVersionLevel], 3 zkMigrationReady bool
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const apiVersions: KafkaApiSpec = {
  apiKey: 18,
  name: 'ApiVersions',
  request: message('ApiVersionsRequest', 18, '0-4', '3+', [
    f.string('clientSoftwareName', '3+'),
    f.string('clientSoftwareVersion', '3+'),
  ]),
  response: message('ApiVersionsResponse', 18, '0-4', '3+', [
    f.int16('errorCode'),
    f.array('apiKeys', '0+', [f.int16('apiKey'), f.int16('minVersion'), f.int16('maxVersion')]),
    f.int32('throttleTimeMs', '1+'),
    f.array('supportedFeatures', '3+', [f.string('name', '3+'), f.int16('minVersion', '3+'), f.int16('maxVersion', '3+')], { tag: 0 }),
    f.int64('finalizedFeaturesEpoch', '3+', { tag: 1, default: -1 }),
    f.array('finalizedFeatures', '3+', [f.string('name', '3+'), f.int16('maxVersionLevel', '3+'), f.int16('minVersionLevel', '3+')], { tag: 2 }),
    f.bool('zkMigrationReady', '3+', { tag: 3 }),
  ]),
};
