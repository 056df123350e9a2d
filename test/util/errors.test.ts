import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Errors, SluiceError, errorForCode, isSluiceError } from '../../src/util/errors.js';

function findUp(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, name))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`${name} not found`);
    dir = up;
  }
  return path.join(dir, name);
}

describe('error table', () => {
  it('has unique codes and names', () => {
    const infos = Object.values(Errors);
    expect(new Set(infos.map((e) => e.code)).size).to.equal(infos.length);
    for (const [key, info] of Object.entries(Errors)) expect(info.name).to.equal(key);
  });

  it('maps codes back, unknown codes to UNKNOWN_SERVER_ERROR', () => {
    expect(errorForCode(6)).to.equal(Errors.NOT_LEADER_OR_FOLLOWER);
    expect(errorForCode(99999)).to.equal(Errors.UNKNOWN_SERVER_ERROR);
  });

  it('SluiceError carries code, retriability and details', () => {
    const err = new SluiceError(Errors.OFFSET_OUT_OF_RANGE, 'offset 9', { logStartOffset: 0, logEndOffset: 5 });
    expect(err.code).to.equal(1);
    expect(err.retriable).to.equal(false);
    expect(err.details).to.deep.equal({ logStartOffset: 0, logEndOffset: 5 });
    expect(err.message).to.equal('OFFSET_OUT_OF_RANGE: offset 9');
    expect(isSluiceError(err, Errors.OFFSET_OUT_OF_RANGE)).to.equal(true);
    expect(isSluiceError(err, Errors.CORRUPT_MESSAGE)).to.equal(false);
  });

  it('is documented row for row in docs/protocol.md', () => {
    const doc = fs.readFileSync(path.join(path.dirname(findUp('package.json')), 'docs/protocol.md'), 'utf8');
    for (const info of Object.values(Errors)) {
      const row = new RegExp(`^\\|\\s*${info.code}\\s*\\|\\s*\`${info.name}\`\\s*\\|\\s*${info.retriable ? 'yes' : 'no'}\\s*\\|`, 'm');
      expect(doc, `docs/protocol.md row for ${info.name}`).to.match(row);
    }
  });
});
