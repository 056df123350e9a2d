// Producer id allocation for InitProducerId (src/server/producer-ids.ts) with a
// fake controller: ids come from controller blocks, once each, with one block
// request in flight however many callers wait; a refused or failed block
// request is a retriable COORDINATOR_NOT_AVAILABLE and the next call tries
// again; InitProducerId hands out fresh ids at epoch 0 and bumps the epoch of
// a named producer (a fresh id past int16 max).

import { expect } from 'chai';
import { Errors, SluiceError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { ProducerIdManager, initProducerId, type ProducerIdSource } from '../../src/server/producer-ids.js';
import type { ControllerCall } from '../../src/server/broker-api.js';

type Answer = Record<string, unknown> | Error;

function fakeController(answers: Answer[]) {
  const calls: Array<{ api: string; body: Record<string, unknown> }> = [];
  let release: (() => void) | null = null;
  let gate: Promise<void> = Promise.resolve();
  const control: ControllerCall = async <T>(api: string, body: Record<string, unknown>): Promise<T> => {
    calls.push({ api, body });
    await gate;
    const a = answers.shift();
    if (a === undefined) throw new Error('no more answers');
    if (a instanceof Error) throw a;
    return a as T;
  };
  return {
    calls, control,
    hold: () => { gate = new Promise((r) => { release = r; }); },
    release: () => release?.(),
  };
}

async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SluiceError) return err.code;
    throw err;
  }
  return 0;
}

describe('server: producer ids (InitProducerId)', () => {
  it('hands out each id of the controller\'s blocks once, fetching one block at a time', async () => {
    const ctl = fakeController([
      { errorCode: 0, errorMessage: null, firstProducerId: 1000, size: 3 },
      { errorCode: 0, errorMessage: null, firstProducerId: 5000, size: 3 },
    ]);
    const ids = new ProducerIdManager({ brokerId: 7, brokerEpoch: () => 42, control: ctl.control, logger: silentLogger });
    ctl.hold();
    const first = Promise.all([1, 2, 3, 4].map(() => ids.nextProducerId()));
    ctl.release();
    expect((await first).sort((a, b) => a - b)).to.deep.equal([1000, 1001, 1002, 5000]);
    expect(await ids.nextProducerId()).to.equal(5001);
    expect(ctl.calls).to.deep.equal([
      { api: 'allocateProducerIds', body: { brokerId: 7, brokerEpoch: 42 } },
      { api: 'allocateProducerIds', body: { brokerId: 7, brokerEpoch: 42 } },
    ]);
  });

  it('answers COORDINATOR_NOT_AVAILABLE when the controller refuses or cannot be reached, and tries again next time', async () => {
    const ctl = fakeController([
      { errorCode: Errors.STALE_BROKER_EPOCH.code, errorMessage: 'STALE_BROKER_EPOCH' },
      new Error('no controller'),
      { errorCode: 0, errorMessage: null, firstProducerId: 5, size: 0 },
      { errorCode: 0, errorMessage: null, firstProducerId: 10, size: 2 },
      { errorCode: 0, errorMessage: null, firstProducerId: 3, size: 2 },
    ]);
    const ids = new ProducerIdManager({ brokerId: 1, brokerEpoch: () => -1, control: ctl.control, logger: silentLogger });
    expect(await codeOf(ids.nextProducerId())).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    expect(await codeOf(ids.nextProducerId())).to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    expect(await codeOf(ids.nextProducerId()), 'an empty block').to.equal(Errors.COORDINATOR_NOT_AVAILABLE.code);
    expect(await ids.nextProducerId()).to.equal(10);
    expect(await ids.nextProducerId()).to.equal(11);
    expect(await codeOf(ids.nextProducerId()), 'a block going backwards').to.equal(Errors.UNKNOWN_SERVER_ERROR.code);
  });

  it('gives a fresh id at epoch 0, bumps the epoch of a named producer, and a fresh id past int16 max', async () => {
    let next = 77;
    const source: ProducerIdSource = { nextProducerId: () => Promise.resolve(next++) };
    expect(await initProducerId({ producerId: -1, producerEpoch: -1 }, source)).to.deep.equal({ errorCode: 0, errorMessage: null, producerId: 77, producerEpoch: 0 });
    expect(await initProducerId({ producerId: 77, producerEpoch: 0 }, source)).to.deep.include({ producerId: 77, producerEpoch: 1 });
    expect(await initProducerId({ producerId: 77, producerEpoch: 32766 }, source)).to.deep.include({ producerId: 77, producerEpoch: 32767 });
    expect(await initProducerId({ producerId: 77, producerEpoch: 32767 }, source)).to.deep.include({ producerId: 78, producerEpoch: 0 });
    expect(await codeOf(initProducerId({ producerId: 77, producerEpoch: -1 }, source))).to.equal(Errors.INVALID_REQUEST.code);
    expect(await codeOf(initProducerId({ producerId: -1, producerEpoch: 3 }, source))).to.equal(Errors.INVALID_REQUEST.code);
    expect(await codeOf(initProducerId({ producerId: 1, producerEpoch: 40_000 }, source))).to.equal(Errors.INVALID_REQUEST.code);
  });
});
