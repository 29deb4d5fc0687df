/** A synthetic community in the API's shapes, as operators import it: n players, the rest in proportion. */
export function community(n: number) {
  const at = (days: number) => `${new Date(Date.UTC(2026, 0, 1) + days * 86_400_000).toISOString().slice(0, 19)}Z`;
  const now = Date.now();
  const iso = (ms: number) => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
  const players = Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    pseudo: `Player${i}`,
    token: `tok${i.toString(36)}x${(i * 7919).toString(36)}`,
    credit: (i * 31) % 5000,
    gradeId: i % 10,
    modStatus: i % 97 === 0,
    staff: i % 53 === 0,
    alert: i % 2 === 0,
    nickname: i % 2 === 0 ? `Nick${i}` : null,
    firstConnection: at(i % 300),
    totalTimeConnection: (i % 1000) * 1.5,
    status: i % 5 === 0 ? "Online" : "Offline",
    ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    chatId: i % 3 === 0 ? String(100000 + i) : null,
    language: i % 4 === 0 ? "EN" : "FR",
    streamerPoint: i % 7,
    tag: i % 11 === 0 ? "VIP" : null,
    color: i % 13 === 0 ? "#ffaa00" : null,
    highclub: i % 17 === 0,
    vote: i % 40,
  }));
  const cosmetics = Array.from({ length: Math.max(10, n / 10) }, (_, i) => ({
    id: i + 1,
    name: `Cosmetic ${i}`,
    type: ["hat", "wings", "pet"][i % 3]!,
    rarity: ["common", "rare", "epic"][i % 3]!,
    game: "lobby",
    argumentFr: `Description ${i}`,
    argumentEn: `Description ${i}`,
    image: `cosmetics/${i}.png`,
    lootbox: i % 2 === 0,
    price: (i * 10) % 1000,
    description: i % 2 ? null : `Item ${i}`,
    collection: i % 5 ? null : "Season 1",
    render: null,
    permanent: i % 3 === 0,
  }));
  const infectedStats = Array.from({ length: Math.floor(n / 2) }, (_, i) => ({
    playerId: i * 2 + 1,
    kill: i % 100,
    assist: i % 50,
    death: i % 70,
    game: i % 30,
    eligibleGame: i % 30,
    winZ: i % 10,
    winH: i % 12,
    playtime: i * 60,
    coin: i % 500,
    point: i % 300,
    objectif: i % 20,
    newPlayer: i % 9 === 0,
  }));
  const temporaryItems = Array.from({ length: 100 }, (_, i) => ({
    id: String(i + 1),
    itemName: `Item ${i}`,
    itemDescription: `Shop item ${i}`,
    price: 100 + i,
    startDate: iso(now - (i % 2 ? 86_400_000 : -86_400_000)),
    endDate: iso(now + 7 * 86_400_000),
  }));
  const worlds = Array.from({ length: Math.max(10, n / 10) }, (_, i) => ({
    id: i + 1,
    name: `World ${i}`,
    ownerId: (i % n) + 1,
    type: "NORMAL",
    state: "unLoaded",
    lastUsed: at(i % 300),
    status: "PUBLIC",
    spawnLocation: "0,64,0",
    gameruleRandomTickSpeed: 3,
    gameruleDaylightCycle: true,
    gamerulePvp: false,
    gamerulePlayerDamage: true,
    tag: null,
  }));
  const parkourMaps = Array.from({ length: 50 }, (_, i) => ({
    id: i + 1,
    name: `Map ${i}`,
    enable: i % 4 !== 0,
    spawnLocation: i % 3 ? `${i},80,${-i},world,0,90` : null,
    difficulty: ["easy", "medium", "hard"][i % 3]!,
  }));
  return { players, cosmetics, infectedStats, temporaryItems, worlds, parkourMaps };
}
