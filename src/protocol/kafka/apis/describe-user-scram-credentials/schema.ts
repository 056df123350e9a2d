// DescribeUserScramCredentials (key 50), v0, flexible. Which SCRAM
// mechanisms (and iteration counts) each user has; never salts or keys.
//
//   request  users [name] (nullable: null or empty = every user)
//   response throttleTimeMs, errorCode, errorMessage (nullable),
//            results [user, errorCode, errorMessage (nullable), credentialInfos [mechanism int8, iterations int32]]
import { f, message, type KafkaApiSpec } from '../../schema.js';

export const describeUserScramCredentials: KafkaApiSpec = {
  apiKey: 50,
  name: 'DescribeUserScramCredentials',
  request: message('DescribeUserScramCredentialsRequest', 50, '0', '0+', [
    f.array('users', '0+', [f.string('name')], { nullable: '0+' }),
  ]),
  response: message('DescribeUserScramCredentialsResponse', 50, '0', '0+', [
    f.int32('throttleTimeMs'),
    f.int16('errorCode'),
    f.string('errorMessage', '0+', { nullable: '0+', default: null }),
    f.array('results', '0+', [
      f.string('user'),
      f.int16('errorCode'),
      f.string('errorMessage', '0+', { nullable: '0+', default: null }),
      f.array('credentialInfos', '0+', [f.int8('mechanism'), f.int32('iterations')]),
    ]),
  ]),
};
