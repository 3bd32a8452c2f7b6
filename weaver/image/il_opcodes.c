/* il_opcodes.c - the opcode table of ECMA-335 Partition III (names, encodings, operands, stack, flow). */
#include "il_opcodes.h"
#include "lt_error.h"

#include <assert.h>
#include <string.h>

#define V IL_STACK_VAR
#define A IL_STACK_ALL

/* One entry: enum name, Partition III name, encoding, operand kind, pops,
 * pushes, flow.  Stack counts are the items of the stack transition diagram
 * of each instruction's Partition III section. */
#define OP(e, nm, c, k, po, pu, fl) \
	[IL_##e] = { nm, c, IL_OPND_##k, IL_FLOW_##fl, po, pu, IL_NOP }
/* A branch with its other form (III.3.5-3.20 long, short forms end in .s). */
#define BR(e, nm, c, k, po, fl, other) \
	[IL_##e] = { nm, c, IL_OPND_##k, IL_FLOW_##fl, po, 0, IL_##other }

static const struct il_opcode_info il_table[IL_OP_COUNT] = {
	OP(NOP, "nop", 0x00, NONE, 0, 0, NEXT),
	OP(BREAK, "break", 0x01, NONE, 0, 0, NEXT),
	OP(LDARG_0, "ldarg.0", 0x02, NONE, 0, 1, NEXT),
	OP(LDARG_1, "ldarg.1", 0x03, NONE, 0, 1, NEXT),
	OP(LDARG_2, "ldarg.2", 0x04, NONE, 0, 1, NEXT),
	OP(LDARG_3, "ldarg.3", 0x05, NONE, 0, 1, NEXT),
	OP(LDLOC_0, "ldloc.0", 0x06, NONE, 0, 1, NEXT),
	OP(LDLOC_1, "ldloc.1", 0x07, NONE, 0, 1, NEXT),
	OP(LDLOC_2, "ldloc.2", 0x08, NONE, 0, 1, NEXT),
	OP(LDLOC_3, "ldloc.3", 0x09, NONE, 0, 1, NEXT),
	OP(STLOC_0, "stloc.0", 0x0A, NONE, 1, 0, NEXT),
	OP(STLOC_1, "stloc.1", 0x0B, NONE, 1, 0, NEXT),
	OP(STLOC_2, "stloc.2", 0x0C, NONE, 1, 0, NEXT),
	OP(STLOC_3, "stloc.3", 0x0D, NONE, 1, 0, NEXT),
	OP(LDARG_S, "ldarg.s", 0x0E, VAR8, 0, 1, NEXT),
	OP(LDARGA_S, "ldarga.s", 0x0F, VAR8, 0, 1, NEXT),
	OP(STARG_S, "starg.s", 0x10, VAR8, 1, 0, NEXT),
	OP(LDLOC_S, "ldloc.s", 0x11, VAR8, 0, 1, NEXT),
	OP(LDLOCA_S, "ldloca.s", 0x12, VAR8, 0, 1, NEXT),
	OP(STLOC_S, "stloc.s", 0x13, VAR8, 1, 0, NEXT),
	OP(LDNULL, "ldnull", 0x14, NONE, 0, 1, NEXT),
	OP(LDC_I4_M1, "ldc.i4.m1", 0x15, NONE, 0, 1, NEXT),
	OP(LDC_I4_0, "ldc.i4.0", 0x16, NONE, 0, 1, NEXT),
	OP(LDC_I4_1, "ldc.i4.1", 0x17, NONE, 0, 1, NEXT),
	OP(LDC_I4_2, "ldc.i4.2", 0x18, NONE, 0, 1, NEXT),
	OP(LDC_I4_3, "ldc.i4.3", 0x19, NONE, 0, 1, NEXT),
	OP(LDC_I4_4, "ldc.i4.4", 0x1A, NONE, 0, 1, NEXT),
	OP(LDC_I4_5, "ldc.i4.5", 0x1B, NONE, 0, 1, NEXT),
	OP(LDC_I4_6, "ldc.i4.6", 0x1C, NONE, 0, 1, NEXT),
	OP(LDC_I4_7, "ldc.i4.7", 0x1D, NONE, 0, 1, NEXT),
	OP(LDC_I4_8, "ldc.i4.8", 0x1E, NONE, 0, 1, NEXT),
	OP(LDC_I4_S, "ldc.i4.s", 0x1F, INT8, 0, 1, NEXT),
	OP(LDC_I4, "ldc.i4", 0x20, INT32, 0, 1, NEXT),
	OP(LDC_I8, "ldc.i8", 0x21, INT64, 0, 1, NEXT),
	OP(LDC_R4, "ldc.r4", 0x22, FLOAT32, 0, 1, NEXT),
	OP(LDC_R8, "ldc.r8", 0x23, FLOAT64, 0, 1, NEXT),
	OP(DUP, "dup", 0x25, NONE, 1, 2, NEXT),
	OP(POP, "pop", 0x26, NONE, 1, 0, NEXT),
	OP(JMP, "jmp", 0x27, TOKEN, 0, 0, RETURN),
	OP(CALL, "call", 0x28, TOKEN, V, V, NEXT),
	OP(CALLI, "calli", 0x29, TOKEN, V, V, NEXT),
	OP(RET, "ret", 0x2A, NONE, V, 0, RETURN),
	BR(BR_S, "br.s", 0x2B, BR8, 0, BRANCH, BR),
	BR(BRFALSE_S, "brfalse.s", 0x2C, BR8, 1, COND, BRFALSE),
	BR(BRTRUE_S, "brtrue.s", 0x2D, BR8, 1, COND, BRTRUE),
	BR(BEQ_S, "beq.s", 0x2E, BR8, 2, COND, BEQ),
	BR(BGE_S, "bge.s", 0x2F, BR8, 2, COND, BGE),
	BR(BGT_S, "bgt.s", 0x30, BR8, 2, COND, BGT),
	BR(BLE_S, "ble.s", 0x31, BR8, 2, COND, BLE),
	BR(BLT_S, "blt.s", 0x32, BR8, 2, COND, BLT),
	BR(BNE_UN_S, "bne.un.s", 0x33, BR8, 2, COND, BNE_UN),
	BR(BGE_UN_S, "bge.un.s", 0x34, BR8, 2, COND, BGE_UN),
	BR(BGT_UN_S, "bgt.un.s", 0x35, BR8, 2, COND, BGT_UN),
	BR(BLE_UN_S, "ble.un.s", 0x36, BR8, 2, COND, BLE_UN),
	BR(BLT_UN_S, "blt.un.s", 0x37, BR8, 2, COND, BLT_UN),
	BR(BR, "br", 0x38, BR32, 0, BRANCH, BR_S),
	BR(BRFALSE, "brfalse", 0x39, BR32, 1, COND, BRFALSE_S),
	BR(BRTRUE, "brtrue", 0x3A, BR32, 1, COND, BRTRUE_S),
	BR(BEQ, "beq", 0x3B, BR32, 2, COND, BEQ_S),
	BR(BGE, "bge", 0x3C, BR32, 2, COND, BGE_S),
	BR(BGT, "bgt", 0x3D, BR32, 2, COND, BGT_S),
	BR(BLE, "ble", 0x3E, BR32, 2, COND, BLE_S),
	BR(BLT, "blt", 0x3F, BR32, 2, COND, BLT_S),
	BR(BNE_UN, "bne.un", 0x40, BR32, 2, COND, BNE_UN_S),
	BR(BGE_UN, "bge.un", 0x41, BR32, 2, COND, BGE_UN_S),
	BR(BGT_UN, "bgt.un", 0x42, BR32, 2, COND, BGT_UN_S),
	BR(BLE_UN, "ble.un", 0x43, BR32, 2, COND, BLE_UN_S),
	BR(BLT_UN, "blt.un", 0x44, BR32, 2, COND, BLT_UN_S),
	OP(SWITCH, "switch", 0x45, SWITCH, 1, 0, COND),
	OP(LDIND_I1, "ldind.i1", 0x46, NONE, 1, 1, NEXT),
	OP(LDIND_U1, "ldind.u1", 0x47, NONE, 1, 1, NEXT),
	OP(LDIND_I2, "ldind.i2", 0x48, NONE, 1, 1, NEXT),
	OP(LDIND_U2, "ldind.u2", 0x49, NONE, 1, 1, NEXT),
	OP(LDIND_I4, "ldind.i4", 0x4A, NONE, 1, 1, NEXT),
	OP(LDIND_U4, "ldind.u4", 0x4B, NONE, 1, 1, NEXT),
	OP(LDIND_I8, "ldind.i8", 0x4C, NONE, 1, 1, NEXT),
	OP(LDIND_I, "ldind.i", 0x4D, NONE, 1, 1, NEXT),
	OP(LDIND_R4, "ldind.r4", 0x4E, NONE, 1, 1, NEXT),
	OP(LDIND_R8, "ldind.r8", 0x4F, NONE, 1, 1, NEXT),
	OP(LDIND_REF, "ldind.ref", 0x50, NONE, 1, 1, NEXT),
	OP(STIND_REF, "stind.ref", 0x51, NONE, 2, 0, NEXT),
	OP(STIND_I1, "stind.i1", 0x52, NONE, 2, 0, NEXT),
	OP(STIND_I2, "stind.i2", 0x53, NONE, 2, 0, NEXT),
	OP(STIND_I4, "stind.i4", 0x54, NONE, 2, 0, NEXT),
	OP(STIND_I8, "stind.i8", 0x55, NONE, 2, 0, NEXT),
	OP(STIND_R4, "stind.r4", 0x56, NONE, 2, 0, NEXT),
	OP(STIND_R8, "stind.r8", 0x57, NONE, 2, 0, NEXT),
	OP(ADD, "add", 0x58, NONE, 2, 1, NEXT),
	OP(SUB, "sub", 0x59, NONE, 2, 1, NEXT),
	OP(MUL, "mul", 0x5A, NONE, 2, 1, NEXT),
	OP(DIV, "div", 0x5B, NONE, 2, 1, NEXT),
	OP(DIV_UN, "div.un", 0x5C, NONE, 2, 1, NEXT),
	OP(REM, "rem", 0x5D, NONE, 2, 1, NEXT),
	OP(REM_UN, "rem.un", 0x5E, NONE, 2, 1, NEXT),
	OP(AND, "and", 0x5F, NONE, 2, 1, NEXT),
	OP(OR, "or", 0x60, NONE, 2, 1, NEXT),
	OP(XOR, "xor", 0x61, NONE, 2, 1, NEXT),
	OP(SHL, "shl", 0x62, NONE, 2, 1, NEXT),
	OP(SHR, "shr", 0x63, NONE, 2, 1, NEXT),
	OP(SHR_UN, "shr.un", 0x64, NONE, 2, 1, NEXT),
	OP(NEG, "neg", 0x65, NONE, 1, 1, NEXT),
	OP(NOT, "not", 0x66, NONE, 1, 1, NEXT),
	OP(CONV_I1, "conv.i1", 0x67, NONE, 1, 1, NEXT),
	OP(CONV_I2, "conv.i2", 0x68, NONE, 1, 1, NEXT),
	OP(CONV_I4, "conv.i4", 0x69, NONE, 1, 1, NEXT),
	OP(CONV_I8, "conv.i8", 0x6A, NONE, 1, 1, NEXT),
	OP(CONV_R4, "conv.r4", 0x6B, NONE, 1, 1, NEXT),
	OP(CONV_R8, "conv.r8", 0x6C, NONE, 1, 1, NEXT),
	OP(CONV_U4, "conv.u4", 0x6D, NONE, 1, 1, NEXT),
	OP(CONV_U8, "conv.u8", 0x6E, NONE, 1, 1, NEXT),
	OP(CALLVIRT, "callvirt", 0x6F, TOKEN, V, V, NEXT),
	OP(CPOBJ, "cpobj", 0x70, TOKEN, 2, 0, NEXT),
	OP(LDOBJ, "ldobj", 0x71, TOKEN, 1, 1, NEXT),
	OP(LDSTR, "ldstr", 0x72, TOKEN, 0, 1, NEXT),
	OP(NEWOBJ, "newobj", 0x73, TOKEN, V, V, NEXT),
	OP(CASTCLASS, "castclass", 0x74, TOKEN, 1, 1, NEXT),
	OP(ISINST, "isinst", 0x75, TOKEN, 1, 1, NEXT),
	OP(CONV_R_UN, "conv.r.un", 0x76, NONE, 1, 1, NEXT),
	OP(UNBOX, "unbox", 0x79, TOKEN, 1, 1, NEXT),
	OP(THROW, "throw", 0x7A, NONE, 1, 0, THROW),
	OP(LDFLD, "ldfld", 0x7B, TOKEN, 1, 1, NEXT),
	OP(LDFLDA, "ldflda", 0x7C, TOKEN, 1, 1, NEXT),
	OP(STFLD, "stfld", 0x7D, TOKEN, 2, 0, NEXT),
	OP(LDSFLD, "ldsfld", 0x7E, TOKEN, 0, 1, NEXT),
	OP(LDSFLDA, "ldsflda", 0x7F, TOKEN, 0, 1, NEXT),
	OP(STSFLD, "stsfld", 0x80, TOKEN, 1, 0, NEXT),
	OP(STOBJ, "stobj", 0x81, TOKEN, 2, 0, NEXT),
	OP(CONV_OVF_I1_UN, "conv.ovf.i1.un", 0x82, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I2_UN, "conv.ovf.i2.un", 0x83, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I4_UN, "conv.ovf.i4.un", 0x84, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I8_UN, "conv.ovf.i8.un", 0x85, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U1_UN, "conv.ovf.u1.un", 0x86, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U2_UN, "conv.ovf.u2.un", 0x87, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U4_UN, "conv.ovf.u4.un", 0x88, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U8_UN, "conv.ovf.u8.un", 0x89, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I_UN, "conv.ovf.i.un", 0x8A, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U_UN, "conv.ovf.u.un", 0x8B, NONE, 1, 1, NEXT),
	OP(BOX, "box", 0x8C, TOKEN, 1, 1, NEXT),
	OP(NEWARR, "newarr", 0x8D, TOKEN, 1, 1, NEXT),
	OP(LDLEN, "ldlen", 0x8E, NONE, 1, 1, NEXT),
	OP(LDELEMA, "ldelema", 0x8F, TOKEN, 2, 1, NEXT),
	OP(LDELEM_I1, "ldelem.i1", 0x90, NONE, 2, 1, NEXT),
	OP(LDELEM_U1, "ldelem.u1", 0x91, NONE, 2, 1, NEXT),
	OP(LDELEM_I2, "ldelem.i2", 0x92, NONE, 2, 1, NEXT),
	OP(LDELEM_U2, "ldelem.u2", 0x93, NONE, 2, 1, NEXT),
	OP(LDELEM_I4, "ldelem.i4", 0x94, NONE, 2, 1, NEXT),
	OP(LDELEM_U4, "ldelem.u4", 0x95, NONE, 2, 1, NEXT),
	OP(LDELEM_I8, "ldelem.i8", 0x96, NONE, 2, 1, NEXT),
	OP(LDELEM_I, "ldelem.i", 0x97, NONE, 2, 1, NEXT),
	OP(LDELEM_R4, "ldelem.r4", 0x98, NONE, 2, 1, NEXT),
	OP(LDELEM_R8, "ldelem.r8", 0x99, NONE, 2, 1, NEXT),
	OP(LDELEM_REF, "ldelem.ref", 0x9A, NONE, 2, 1, NEXT),
	OP(STELEM_I, "stelem.i", 0x9B, NONE, 3, 0, NEXT),
	OP(STELEM_I1, "stelem.i1", 0x9C, NONE, 3, 0, NEXT),
	OP(STELEM_I2, "stelem.i2", 0x9D, NONE, 3, 0, NEXT),
	OP(STELEM_I4, "stelem.i4", 0x9E, NONE, 3, 0, NEXT),
	OP(STELEM_I8, "stelem.i8", 0x9F, NONE, 3, 0, NEXT),
	OP(STELEM_R4, "stelem.r4", 0xA0, NONE, 3, 0, NEXT),
	OP(STELEM_R8, "stelem.r8", 0xA1, NONE, 3, 0, NEXT),
	OP(STELEM_REF, "stelem.ref", 0xA2, NONE, 3, 0, NEXT),
	OP(LDELEM, "ldelem", 0xA3, TOKEN, 2, 1, NEXT),
	OP(STELEM, "stelem", 0xA4, TOKEN, 3, 0, NEXT),
	OP(UNBOX_ANY, "unbox.any", 0xA5, TOKEN, 1, 1, NEXT),
	OP(CONV_OVF_I1, "conv.ovf.i1", 0xB3, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U1, "conv.ovf.u1", 0xB4, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I2, "conv.ovf.i2", 0xB5, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U2, "conv.ovf.u2", 0xB6, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I4, "conv.ovf.i4", 0xB7, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U4, "conv.ovf.u4", 0xB8, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I8, "conv.ovf.i8", 0xB9, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U8, "conv.ovf.u8", 0xBA, NONE, 1, 1, NEXT),
	OP(REFANYVAL, "refanyval", 0xC2, TOKEN, 1, 1, NEXT),
	OP(CKFINITE, "ckfinite", 0xC3, NONE, 1, 1, NEXT),
	OP(MKREFANY, "mkrefany", 0xC6, TOKEN, 1, 1, NEXT),
	OP(LDTOKEN, "ldtoken", 0xD0, TOKEN, 0, 1, NEXT),
	OP(CONV_U2, "conv.u2", 0xD1, NONE, 1, 1, NEXT),
	OP(CONV_U1, "conv.u1", 0xD2, NONE, 1, 1, NEXT),
	OP(CONV_I, "conv.i", 0xD3, NONE, 1, 1, NEXT),
	OP(CONV_OVF_I, "conv.ovf.i", 0xD4, NONE, 1, 1, NEXT),
	OP(CONV_OVF_U, "conv.ovf.u", 0xD5, NONE, 1, 1, NEXT),
	OP(ADD_OVF, "add.ovf", 0xD6, NONE, 2, 1, NEXT),
	OP(ADD_OVF_UN, "add.ovf.un", 0xD7, NONE, 2, 1, NEXT),
	OP(MUL_OVF, "mul.ovf", 0xD8, NONE, 2, 1, NEXT),
	OP(MUL_OVF_UN, "mul.ovf.un", 0xD9, NONE, 2, 1, NEXT),
	OP(SUB_OVF, "sub.ovf", 0xDA, NONE, 2, 1, NEXT),
	OP(SUB_OVF_UN, "sub.ovf.un", 0xDB, NONE, 2, 1, NEXT),
	OP(ENDFINALLY, "endfinally", 0xDC, NONE, A, 0, RETURN),
	BR(LEAVE, "leave", 0xDD, BR32, A, BRANCH, LEAVE_S),
	BR(LEAVE_S, "leave.s", 0xDE, BR8, A, BRANCH, LEAVE),
	OP(STIND_I, "stind.i", 0xDF, NONE, 2, 0, NEXT),
	OP(CONV_U, "conv.u", 0xE0, NONE, 1, 1, NEXT),
	OP(ARGLIST, "arglist", 0xFE00, NONE, 0, 1, NEXT),
	OP(CEQ, "ceq", 0xFE01, NONE, 2, 1, NEXT),
	OP(CGT, "cgt", 0xFE02, NONE, 2, 1, NEXT),
	OP(CGT_UN, "cgt.un", 0xFE03, NONE, 2, 1, NEXT),
	OP(CLT, "clt", 0xFE04, NONE, 2, 1, NEXT),
	OP(CLT_UN, "clt.un", 0xFE05, NONE, 2, 1, NEXT),
	OP(LDFTN, "ldftn", 0xFE06, TOKEN, 0, 1, NEXT),
	OP(LDVIRTFTN, "ldvirtftn", 0xFE07, TOKEN, 1, 1, NEXT),
	OP(LDARG, "ldarg", 0xFE09, VAR16, 0, 1, NEXT),
	OP(LDARGA, "ldarga", 0xFE0A, VAR16, 0, 1, NEXT),
	OP(STARG, "starg", 0xFE0B, VAR16, 1, 0, NEXT),
	OP(LDLOC, "ldloc", 0xFE0C, VAR16, 0, 1, NEXT),
	OP(LDLOCA, "ldloca", 0xFE0D, VAR16, 0, 1, NEXT),
	OP(STLOC, "stloc", 0xFE0E, VAR16, 1, 0, NEXT),
	OP(LOCALLOC, "localloc", 0xFE0F, NONE, 1, 1, NEXT),
	OP(ENDFILTER, "endfilter", 0xFE11, NONE, 1, 0, RETURN),
	OP(UNALIGNED, "unaligned.", 0xFE12, INT8, 0, 0, META),
	OP(VOLATILE, "volatile.", 0xFE13, NONE, 0, 0, META),
	OP(TAIL, "tail.", 0xFE14, NONE, 0, 0, META),
	OP(INITOBJ, "initobj", 0xFE15, TOKEN, 1, 0, NEXT),
	OP(CONSTRAINED, "constrained.", 0xFE16, TOKEN, 0, 0, META),
	OP(CPBLK, "cpblk", 0xFE17, NONE, 3, 0, NEXT),
	OP(INITBLK, "initblk", 0xFE18, NONE, 3, 0, NEXT),
	OP(NO, "no.", 0xFE19, INT8, 0, 0, META),
	OP(RETHROW, "rethrow", 0xFE1A, NONE, 0, 0, THROW),
	OP(SIZEOF, "sizeof", 0xFE1C, TOKEN, 0, 1, NEXT),
	OP(REFANYTYPE, "refanytype", 0xFE1D, NONE, 1, 1, NEXT),
	OP(READONLY, "readonly.", 0xFE1E, NONE, 0, 0, META),
};

const struct il_opcode_info *il_op_info(enum il_op op)
{
	assert((unsigned)op < IL_OP_COUNT);
	return &il_table[op];
}

/* Opcode lookup by encoding: one slot per first byte, one per second byte
 * after 0xFE (III.1.2); -1 where no opcode is defined.  Filled from il_table
 * on first use, since every IL byte of an assembly passes through here. */
static int16_t op_by_byte[2][256];

static void fill_op_by_byte(void)
{
	unsigned i;

	memset(op_by_byte, 0xFF, sizeof op_by_byte);
	for (i = 0; i < IL_OP_COUNT; i++)
		op_by_byte[il_table[i].code > 0xFF][il_table[i].code & 0xFF] = (int16_t)i;
}

int il_op_from_code(uint16_t code, enum il_op *out)
{
	static int filled;
	int16_t op = -1;

	if (!filled) {
		fill_op_by_byte();
		filled = 1;
	}
	if (code <= 0xFF || (code >> 8) == 0xFE)
		op = op_by_byte[code > 0xFF][code & 0xFF];
	if (op < 0)
		return lt_error_set(LT_E_BODY, "unknown opcode 0x%x (III.1.2)", code);
	*out = (enum il_op)op;
	return 0;
}

unsigned il_op_code_size(enum il_op op)
{
	return il_op_info(op)->code > 0xFF ? 2 : 1;
}

unsigned il_operand_size(enum il_operand k)
{
	static const uint8_t size[] = {
		[IL_OPND_NONE] = 0, [IL_OPND_INT8] = 1, [IL_OPND_VAR8] = 1,
		[IL_OPND_VAR16] = 2, [IL_OPND_INT32] = 4, [IL_OPND_INT64] = 8,
		[IL_OPND_FLOAT32] = 4, [IL_OPND_FLOAT64] = 8, [IL_OPND_TOKEN] = 4,
		[IL_OPND_BR8] = 1, [IL_OPND_BR32] = 4, [IL_OPND_SWITCH] = 4,
	};
	return size[k];
}

int il_op_is_branch(enum il_op op)
{
	uint8_t k = il_op_info(op)->operand;
	return k == IL_OPND_BR8 || k == IL_OPND_BR32;
}
