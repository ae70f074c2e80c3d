export const tradeMoneyTools = [];
