import { cosmetic } from "./cosmetic.js";
import { formAnswer } from "./form.js";
import { infectedStats } from "./infected.js";
import { parkourMap } from "./parkour.js";
import { player } from "./player.js";
import { rewardLog } from "./reward-log.js";
import { temporaryItem } from "./temporary-item.js";
import { world } from "./world.js";

/** Every entity of the API, in an order that satisfies foreign keys (players first). */
export const ENTITIES = [player, cosmetic, formAnswer, infectedStats, temporaryItem, rewardLog, world, parkourMap] as const;
