// AlterUserScramCredentials (key 51), v0, flexible. The client salts and
// iterates the password itself (Kafka's admin client): the request carries
// salt and SaltedPassword, never the password.
//
//   request  deletions [name, mechanism int8], upsertions [name, mechanism int8, iterations int32, salt bytes, saltedPassword bytes]
//   response throttleTimeMs, results [user, errorCode, errorMessage (nullable)]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const alterUserScramCredentials: KafkaApiSpec = {
  apiKey: 51,
  name: 'AlterUserScramCredentials',
  request: message('AlterUserScramCredentialsRequest', 51, '0', '0+', [
    f.array('deletions', '0+', [f.string('name'), f.int8('mechanism')]),
    f.array('upsertions', '0+', [f.string('name'), f.int8('mechanism'), f.int32('iterations'), f.bytes('salt'), f.bytes('saltedPassword')]),
  ]),
  response: message('AlterUserScramCredentialsResponse', 51, '0', '0+', [
    f.int32('throttleTimeMs'),
    f.array('results', '0+', [f.string('user'), f.int16('errorCode'), f.string('errorMessage', '0+', { nullable: '0+', default: null })]),
  ]),
};
