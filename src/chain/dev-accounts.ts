import { mnemonicToAccount, type PrivateKeyAccount } from "viem/accounts";
import { toHex } from "viem";
import { accountFromKey } from "./native-account.js";

// Keys of the embedded dev chain: anvil's well-known test mnemonic. They hold test money on a
// private chain only and must never be used anywhere else.
const DEV_MNEMONIC = "test test test test test test test test test test test junk";

export interface DevAccounts {
  /** Sends settlement transactions (built-in facilitator). */
  facilitator: PrivateKeyAccount;
  /** Receives payments (payTo) and sends refunds. */
  treasury: PrivateKeyAccount;
  /** Mints test USDC for the faucet (the token's minter). */
  faucet: PrivateKeyAccount;
}

function devAccount(index: number): PrivateKeyAccount {
  const key = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index }).getHdKey().privateKey!;
  return accountFromKey(toHex(key));
}

export function devAccounts(): DevAccounts {
  return { facilitator: devAccount(0), treasury: devAccount(1), faucet: devAccount(2) };
}
