/* il_opcodes.h - the CIL instruction set of ECMA-335 Partition III as plain data. */
#ifndef IL_OPCODES_H
#define IL_OPCODES_H

#include <stdint.h>

/* Every opcode of Partition III, prefixes included (III.2), in the order of
 * their encodings: one-byte opcodes 0x00-0xE0, then the 0xFE-prefixed ones
 * 0xFE00-0xFE1E.  Values are dense indexes into the table of il_op_info(),
 * not encodings (il_opcode_info.code holds the encoding). */
enum il_op {
	IL_NOP, IL_BREAK,
	IL_LDARG_0, IL_LDARG_1, IL_LDARG_2, IL_LDARG_3,
	IL_LDLOC_0, IL_LDLOC_1, IL_LDLOC_2, IL_LDLOC_3,
	IL_STLOC_0, IL_STLOC_1, IL_STLOC_2, IL_STLOC_3,
	IL_LDARG_S, IL_LDARGA_S, IL_STARG_S, IL_LDLOC_S, IL_LDLOCA_S, IL_STLOC_S,
	IL_LDNULL, IL_LDC_I4_M1, IL_LDC_I4_0, IL_LDC_I4_1, IL_LDC_I4_2, IL_LDC_I4_3,
	IL_LDC_I4_4, IL_LDC_I4_5, IL_LDC_I4_6, IL_LDC_I4_7, IL_LDC_I4_8,
	IL_LDC_I4_S, IL_LDC_I4, IL_LDC_I8, IL_LDC_R4, IL_LDC_R8,
	IL_DUP, IL_POP, IL_JMP, IL_CALL, IL_CALLI, IL_RET,
	IL_BR_S, IL_BRFALSE_S, IL_BRTRUE_S, IL_BEQ_S, IL_BGE_S, IL_BGT_S, IL_BLE_S,
	IL_BLT_S, IL_BNE_UN_S, IL_BGE_UN_S, IL_BGT_UN_S, IL_BLE_UN_S, IL_BLT_UN_S,
	IL_BR, IL_BRFALSE, IL_BRTRUE, IL_BEQ, IL_BGE, IL_BGT, IL_BLE,
	IL_BLT, IL_BNE_UN, IL_BGE_UN, IL_BGT_UN, IL_BLE_UN, IL_BLT_UN,
	IL_SWITCH,
	IL_LDIND_I1, IL_LDIND_U1, IL_LDIND_I2, IL_LDIND_U2, IL_LDIND_I4, IL_LDIND_U4,
	IL_LDIND_I8, IL_LDIND_I, IL_LDIND_R4, IL_LDIND_R8, IL_LDIND_REF,
	IL_STIND_REF, IL_STIND_I1, IL_STIND_I2, IL_STIND_I4, IL_STIND_I8, IL_STIND_R4, IL_STIND_R8,
	IL_ADD, IL_SUB, IL_MUL, IL_DIV, IL_DIV_UN, IL_REM, IL_REM_UN,
	IL_AND, IL_OR, IL_XOR, IL_SHL, IL_SHR, IL_SHR_UN, IL_NEG, IL_NOT,
	IL_CONV_I1, IL_CONV_I2, IL_CONV_I4, IL_CONV_I8, IL_CONV_R4, IL_CONV_R8,
	IL_CONV_U4, IL_CONV_U8,
	IL_CALLVIRT, IL_CPOBJ, IL_LDOBJ, IL_LDSTR, IL_NEWOBJ, IL_CASTCLASS, IL_ISINST,
	IL_CONV_R_UN, IL_UNBOX, IL_THROW,
	IL_LDFLD, IL_LDFLDA, IL_STFLD, IL_LDSFLD, IL_LDSFLDA, IL_STSFLD, IL_STOBJ,
	IL_CONV_OVF_I1_UN, IL_CONV_OVF_I2_UN, IL_CONV_OVF_I4_UN, IL_CONV_OVF_I8_UN,
	IL_CONV_OVF_U1_UN, IL_CONV_OVF_U2_UN, IL_CONV_OVF_U4_UN, IL_CONV_OVF_U8_UN,
	IL_CONV_OVF_I_UN, IL_CONV_OVF_U_UN,
	IL_BOX, IL_NEWARR, IL_LDLEN, IL_LDELEMA,
	IL_LDELEM_I1, IL_LDELEM_U1, IL_LDELEM_I2, IL_LDELEM_U2, IL_LDELEM_I4, IL_LDELEM_U4,
	IL_LDELEM_I8, IL_LDELEM_I, IL_LDELEM_R4, IL_LDELEM_R8, IL_LDELEM_REF,
	IL_STELEM_I, IL_STELEM_I1, IL_STELEM_I2, IL_STELEM_I4, IL_STELEM_I8,
	IL_STELEM_R4, IL_STELEM_R8, IL_STELEM_REF,
	IL_LDELEM, IL_STELEM, IL_UNBOX_ANY,
	IL_CONV_OVF_I1, IL_CONV_OVF_U1, IL_CONV_OVF_I2, IL_CONV_OVF_U2,
	IL_CONV_OVF_I4, IL_CONV_OVF_U4, IL_CONV_OVF_I8, IL_CONV_OVF_U8,
	IL_REFANYVAL, IL_CKFINITE, IL_MKREFANY, IL_LDTOKEN,
	IL_CONV_U2, IL_CONV_U1, IL_CONV_I, IL_CONV_OVF_I, IL_CONV_OVF_U,
	IL_ADD_OVF, IL_ADD_OVF_UN, IL_MUL_OVF, IL_MUL_OVF_UN, IL_SUB_OVF, IL_SUB_OVF_UN,
	IL_ENDFINALLY, IL_LEAVE, IL_LEAVE_S, IL_STIND_I, IL_CONV_U,
	/* 0xFE-prefixed */
	IL_ARGLIST, IL_CEQ, IL_CGT, IL_CGT_UN, IL_CLT, IL_CLT_UN, IL_LDFTN, IL_LDVIRTFTN,
	IL_LDARG, IL_LDARGA, IL_STARG, IL_LDLOC, IL_LDLOCA, IL_STLOC, IL_LOCALLOC,
	IL_ENDFILTER, IL_UNALIGNED, IL_VOLATILE, IL_TAIL, IL_INITOBJ, IL_CONSTRAINED,
	IL_CPBLK, IL_INITBLK, IL_NO, IL_RETHROW, IL_SIZEOF, IL_REFANYTYPE, IL_READONLY,
	IL_OP_COUNT
};

/* Inline operand kinds (III.1.2, II.25.4.1). */
enum il_operand {
	IL_OPND_NONE,
	IL_OPND_INT8,   /* ldc.i4.s; also the uint8 of unaligned. and no. (kept as read) */
	IL_OPND_VAR8,   /* uint8 argument or local index (ldarg.s ...) */
	IL_OPND_VAR16,  /* uint16 argument or local index (ldarg ...) */
	IL_OPND_INT32,
	IL_OPND_INT64,
	IL_OPND_FLOAT32,
	IL_OPND_FLOAT64,
	IL_OPND_TOKEN,  /* metadata token (III.1.9) */
	IL_OPND_BR8,    /* int8 branch offset from the next instruction */
	IL_OPND_BR32,   /* int32 branch offset from the next instruction */
	IL_OPND_SWITCH  /* uint32 N, then N int32 offsets from the end of the table */
};

/* Control flow after the instruction (III.1.7.1). */
enum il_flow {
	IL_FLOW_NEXT,    /* falls through */
	IL_FLOW_BRANCH,  /* always goes to its target (br, leave) */
	IL_FLOW_COND,    /* target or fall through (conditional branches, switch) */
	IL_FLOW_RETURN,  /* leaves the method or handler (ret, jmp, endfinally, endfilter) */
	IL_FLOW_THROW,   /* throw, rethrow */
	IL_FLOW_META     /* a prefix: applies to the next instruction */
};

/* Stack effect counts: a count, or one of these. */
enum {
	IL_STACK_VAR = -1, /* depends on a signature: ask the stack-effect callback
	                      (call, callvirt, newobj, calli); for ret, the body's
	                      returns_value flag */
	IL_STACK_ALL = -2  /* pops: empties the evaluation stack (leave, endfinally) */
};

struct il_opcode_info {
	const char *name;   /* the Partition III name, "ldarg.s" */
	uint16_t code;      /* encoding: 0x00-0xFF one byte, 0xFE00-0xFEFF two bytes */
	uint8_t operand;    /* enum il_operand */
	uint8_t flow;       /* enum il_flow */
	int8_t pops;        /* stack items popped, or IL_STACK_VAR / IL_STACK_ALL */
	int8_t pushes;      /* stack items pushed, or IL_STACK_VAR */
	uint8_t alt;        /* branches: the other form's enum il_op (br.s <-> br) */
};

/* The table entry of `op`; op must be < IL_OP_COUNT (asserted: enum values
 * come from this code, never from file data). */
const struct il_opcode_info *il_op_info(enum il_op op);

/* Find the opcode whose encoding is `code` (0x00-0xFF, or 0xFE00 | second
 * byte).  Returns 0 with *out set, or -1 with LT_E_BODY when no opcode has
 * that encoding (III.1.2: 0x24, 0x77, 0xFE08, ... are unused). */
int il_op_from_code(uint16_t code, enum il_op *out);

/* Bytes of the opcode itself: 1, or 2 for 0xFE-prefixed ones. */
unsigned il_op_code_size(enum il_op op);

/* Bytes of the inline operand: 0, 1, 2, 4 or 8; for IL_OPND_SWITCH 4, the
 * count N alone (the whole operand is 4 + 4 * N bytes, III.3.66). */
unsigned il_operand_size(enum il_operand k);

/* 1 when op takes a branch operand (IL_OPND_BR8 / IL_OPND_BR32). */
int il_op_is_branch(enum il_op op);

#endif
