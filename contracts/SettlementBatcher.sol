// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// The EIP-3009 entry point USDC (FiatTokenV2 and later) and our DevUsdc both expose.
interface IEip3009 {
    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external;
}

/// @title SettlementBatcher: settles many x402 (EIP-3009) authorizations in one transaction.
/// @notice Each authorization runs in its own try/catch with a gas cap, so one bad authorization (nonce
/// already used, balance too low, expired, bad signature) fails alone and the others settle. Every item
/// emits one SettlementItem event naming its index in the batch, its authorizer and nonce, and its
/// outcome (with the token's revert data when it failed): that index plus the transaction hash is the
/// payment's own settlement record, and the token's AuthorizationUsed(authorizer, nonce) event in the
/// same transaction proves it on-chain.
/// @dev Stateless, ownerless and holds no funds: it is placed on the dev chain with anvil_setCode (no
/// constructor runs) and can be deployed once on any chain. No access control is needed:
/// transferWithAuthorization pays `to` exactly as the payer signed it, so whoever calls settle() cannot
/// redirect, split or keep funds; a front-runner who copies a pending authorization can only make the
/// same payment to the same payee earlier (which EIP-3009 already allows anyone to do directly on the
/// token), and the facilitator then finds it settled through AuthorizationUsed.
contract SettlementBatcher {
    struct Authorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    /// Gas each item may use: USDC's transferWithAuthorization needs ~70k cold; a payer that is a contract
    /// (ERC-1271 signature check) cannot burn the gas of the items after it.
    uint256 public constant ITEM_GAS = 200_000;

    /// Outcome of item `index` of a batch; `reason` is the token's revert data (empty on success).
    event SettlementItem(address indexed authorizer, bytes32 indexed nonce, uint256 index, bool success, bytes reason);

    /// Settles each authorization on `token`; never reverts because of one item. Returns each item's outcome.
    function settle(address token, Authorization[] calldata items) external returns (bool[] memory ok) {
        ok = new bool[](items.length);
        for (uint256 i = 0; i < items.length; i++) {
            Authorization calldata a = items[i];
            // The whole batch must have been given enough gas for every item: never report an item as
            // failed only because the transaction ran short (the caller sizes gas per item).
            require(gasleft() > ITEM_GAS + 20_000, "SettlementBatcher: gas too low for the batch");
            try IEip3009(token).transferWithAuthorization{gas: ITEM_GAS}(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.v, a.r, a.s) {
                ok[i] = true;
                emit SettlementItem(a.from, a.nonce, i, true, "");
            } catch (bytes memory reason) {
                emit SettlementItem(a.from, a.nonce, i, false, reason);
            }
        }
    }
}
