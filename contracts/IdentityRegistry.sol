// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title IdentityRegistry: a minimal ERC-8004 Identity Registry for the embedded dev chain.
/// @notice ERC-721-style agent identities: `register(agentURI)` mints the next agentId to the caller;
/// `ownerOf`, `balanceOf`, `tokenURI`, `transferFrom`; the reserved `agentWallet` metadata (initialised
/// to the owner, readable through `getMetadata(agentId, "agentWallet")`, cleared on transfer). Simplified
/// against the reference: the owner sets the agent wallet directly (the reference also asks the new
/// wallet for an EIP-712 proof). Placed with anvil_setCode: all storage starts empty.
contract IdentityRegistry {
    uint256 private _lastId; // slot 0
    mapping(uint256 => address) private _owners; // slot 1
    mapping(address => uint256) private _balances; // slot 2
    mapping(uint256 => string) private _uris; // slot 3
    mapping(uint256 => address) private _agentWallets; // slot 4

    string public constant name = "ERC-8004 Agent Identity (dev)";
    string public constant symbol = "AGENT";

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(uint256 indexed agentId, string indexed indexedKey, string key, bytes value);

    function register(string calldata agentURI) external returns (uint256 agentId) {
        agentId = ++_lastId;
        _owners[agentId] = msg.sender;
        _balances[msg.sender] += 1;
        _uris[agentId] = agentURI;
        emit Transfer(address(0), msg.sender, agentId);
        emit Registered(agentId, agentURI, msg.sender);
        emit MetadataSet(agentId, "agentWallet", "agentWallet", abi.encodePacked(msg.sender));
    }

    function ownerOf(uint256 agentId) public view returns (address owner) {
        owner = _owners[agentId];
        require(owner != address(0), "ERC721: invalid token ID");
    }

    function balanceOf(address owner) external view returns (uint256) {
        return _balances[owner];
    }

    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return _uris[agentId];
    }

    function setAgentURI(uint256 agentId, string calldata agentURI) external {
        require(msg.sender == ownerOf(agentId), "IdentityRegistry: caller is not the owner");
        _uris[agentId] = agentURI;
    }

    function setAgentWallet(uint256 agentId, address wallet) external {
        require(msg.sender == ownerOf(agentId), "IdentityRegistry: caller is not the owner");
        _agentWallets[agentId] = wallet;
        emit MetadataSet(agentId, "agentWallet", "agentWallet", abi.encodePacked(wallet));
    }

    function getAgentWallet(uint256 agentId) public view returns (address) {
        address wallet = _agentWallets[agentId];
        return wallet == address(0) ? ownerOf(agentId) : wallet;
    }

    /// Only the reserved `agentWallet` key is kept by this minimal registry (20 bytes, packed).
    function getMetadata(uint256 agentId, string calldata key) external view returns (bytes memory) {
        if (keccak256(bytes(key)) == keccak256("agentWallet")) return abi.encodePacked(getAgentWallet(agentId));
        return "";
    }

    function transferFrom(address from, address to, uint256 agentId) external {
        require(from == ownerOf(agentId) && msg.sender == from, "IdentityRegistry: caller is not the owner");
        require(to != address(0), "IdentityRegistry: transfer to the zero address");
        _owners[agentId] = to;
        _balances[from] -= 1;
        _balances[to] += 1;
        delete _agentWallets[agentId];
        emit Transfer(from, to, agentId);
    }
}
