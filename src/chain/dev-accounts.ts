import { mnemonicToAccount } from "viem/accounts";
import type { HDAccount } from "viem";

// Keys of the embedded dev chain: anvil's well-known test mnemonic. They hold test money on a
// private chain only and must never be used anywhere else.
const DEV_MNEMONIC = "test test test test test test test test test test test junk";

export interface DevAccounts {
  /** Sends settlement transactions (built-in facilitator). */
  facilitator: HDAccount;
  /** Receives payments (payTo) and sends refunds. */
  treasury: HDAccount;
  /** Mints test USDC for the faucet (the token's minter). */
  faucet: HDAccount;
}

export function devAccounts(): DevAccounts {
  return {
    facilitator: mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 0 }),
    treasury: mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 1 }),
    faucet: mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 2 }),
  };
}

/** Private key of a dev account, for code that signs with raw keys. */
export function devPrivateKey(account: HDAccount): `0x${string}` {
  return `0x${Buffer.from(account.getHdKey().privateKey!).toString("hex")}`;
}
